"""Which llama.cpp weight layout is safe on this CPU, decided from the CPU's flags and the build's features.

llama.cpp may move ("repack") quantized weights into an *extra buffer type* chosen for the CPU: the
AVX2/AVX-512 interleaved layout (``CPU_REPACK``) or, when the library was compiled with AMX, Intel's AMX
tiles. The AMX path crashes with a segmentation fault on Q4_K weights (ggml-org/llama.cpp#20824), and a
``pip install`` from the sdist compiles it in on every AMX machine (``-march=native``). llama.cpp can
turn extra buffer types off only all together (``use_extra_bufts``), which also loses the CPU repack, so
they are turned off wherever the AMX path would run: an AMX build on an AMX CPU. Elsewhere both layouts
are safe and the faster one is measured (``native_probe``). ``scripts/setup.sh`` builds without AMX, so
its users keep both choices everywhere.

``open_llama`` opens a model with the chosen layout (the provider and the probe's child both use it).

A build compiled for instructions this CPU lacks (a wheel built on another machine) dies with an illegal
instruction; that is named here too, before anything is loaded.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.errors import ProviderUnavailable

PROVIDER_LABEL = "local LLM (llama.cpp)"

WeightRepacking = Literal["auto", "on", "off"]

#: CPU flags that decide which llama.cpp (and embedder) kernels can run; the doctor prints these.
RELEVANT_CPU_FLAGS = (
    "sse4_2", "avx", "avx2", "fma", "f16c", "bmi2",
    "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512vbmi",
    "amx_tile", "amx_int8", "amx_bf16",
)  # fmt: skip

# llama.cpp's build features (from llama_print_system_info) and the /proc/cpuinfo flag each one needs.
_FEATURE_NEEDS_FLAG = {
    "SSE3": "pni",
    "SSSE3": "ssse3",
    "AVX": "avx",
    "AVX2": "avx2",
    "F16C": "f16c",
    "FMA": "fma",
    "BMI2": "bmi2",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
    "AMX_INT8": "amx_int8",
}

_SETTING = "llm.weight_repacking"
CPUINFO = Path("/proc/cpuinfo")


def read_cpu_flags(cpuinfo_path: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags (x86 ``flags``, ARM ``Features``); empty where ``/proc/cpuinfo`` is
    unreadable (not Linux)."""
    return frozenset(_first_processor_field(cpuinfo_path, ("flags", "Features")).split())


def cpu_model_name(cpuinfo_path: Path = CPUINFO) -> str:
    return _first_processor_field(cpuinfo_path, ("model name",)) or "unknown"


@functools.lru_cache(maxsize=8)
def _first_processor_field(cpuinfo_path: Path, keys: tuple[str, ...]) -> str:
    """The value of the first of ``keys`` in a ``/proc/cpuinfo`` text; read once per process (the CPU
    does not change while it runs)."""
    try:
        text = cpuinfo_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in keys:
            return value.strip()
    return ""


def parse_build_features(system_info: str) -> dict[str, str]:
    """``llama_print_system_info()``'s ``NAME = value`` pairs, e.g. ``{"AVX2": "1", "AMX_INT8": "1"}``."""
    return {name: value for name, value in re.findall(r"([A-Z][A-Z0-9_]*) = ([^|\s]+)", system_info)}


def missing_instructions(cpu_flags: frozenset[str], build_features: dict[str, str]) -> list[str]:
    """Instruction sets the build was compiled for that this CPU lacks (it would die with SIGILL)."""
    if not cpu_flags:  # unknown CPU: nothing to compare against
        return []
    return [
        feature
        for feature, flag in _FEATURE_NEEDS_FLAG.items()
        if build_features.get(feature) == "1" and flag not in cpu_flags
    ]


@dataclass(frozen=True)
class RepackingPlan:
    """Whether llama.cpp may use extra buffer types (weight repacking), and why."""

    use_extra_buffers: bool
    reason: str


def plan_weight_repacking(
    setting: WeightRepacking, cpu_flags: frozenset[str], build_features: dict[str, str]
) -> RepackingPlan:
    """Decide ``use_extra_bufts`` for this CPU and build; an explicit ``on``/``off`` setting is obeyed."""
    if setting == "on":
        return RepackingPlan(True, f"{_SETTING}=on")
    if setting == "off":
        return RepackingPlan(False, f"{_SETTING}=off")
    if build_features.get("AMX_INT8") == "1" and "amx_int8" in cpu_flags:
        return RepackingPlan(
            False,
            "llama.cpp was built with AMX and this CPU has AMX; its AMX weight path crashes on Q4_K "
            "(ggml-org/llama.cpp#20824), so weights are not repacked (slower generation). "
            "Reinstall with `bash scripts/setup.sh` for a build without AMX that keeps the fast layout",
        )
    return RepackingPlan(True, "no AMX weight path on this CPU/build: weights may be repacked")


def unsupported_build_message(missing: list[str]) -> str:
    return (
        "llama-cpp-python was compiled for a CPU with "
        + ", ".join(missing)
        + ", which this CPU lacks (it would die with an illegal instruction): the installed wheel was "
        "built on another machine. Reinstall it here with `bash scripts/setup.sh`"
    )


def open_llama(model_path: Path, context_tokens: int, num_threads: int, use_extra_buffers: bool) -> Any:
    """A ``llama_cpp.Llama`` over ``model_path``; ``use_extra_buffers=False`` keeps weights unrepacked.

    ``Llama()`` does not take llama.cpp's ``use_extra_bufts``, so the model parameters it starts from
    are amended for the duration of this one load (callers hold ``chat_local``'s loading lock, or are a probe child).
    """
    import llama_cpp.llama_cpp as native
    from llama_cpp import Llama

    defaults = native.llama_model_default_params

    def amended_defaults() -> Any:
        params = defaults()
        params.use_extra_bufts = use_extra_buffers
        return params

    native.llama_model_default_params = amended_defaults
    try:
        return Llama(model_path=str(model_path), n_ctx=context_tokens, n_threads=num_threads, verbose=False)
    except ValueError as exc:  # llama.cpp reports an unreadable model file as ValueError
        raise ProviderUnavailable(PROVIDER_LABEL, f"cannot load {model_path}: {exc}") from exc
    finally:
        native.llama_model_default_params = defaults
