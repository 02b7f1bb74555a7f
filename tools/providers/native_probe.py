"""Native code tried in a child process first, so a crash there becomes a message, not a dead process.

llama.cpp is compiled on the user's machine and its CPU kernels differ from one CPU to the next; one of
them (AMX, ggml-org/llama.cpp#20824) dies with a segmentation fault, which in-process would kill ragpilot
with a bare "Segmentation fault". Before the local LLM is first loaded for a given (llama.cpp build, CPU,
model, repacking setting), a child process loads it and decodes one token. Under
``llm.weight_repacking=auto`` the child loads both weight layouts (repacked for the CPU, and not) and
times a short prompt and generation with each: which is faster depends on the CPU and the build, so it
is measured rather than assumed. The verdict is remembered in the model cache (``llama-probe.json``), so
this runs once per machine and build (about 10 s), not once per process. When the child dies, each
layout is tried alone and the one that survives is used; when none does, the error names the signal,
the CPU and the settings that avoid it.

``python -m tools.providers.native_probe llm MODEL --repacking auto`` and ``... embedder`` are the child
side; the doctor runs both as its smoke test.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from core.errors import ProviderUnavailable
from core.settings import EmbedderSettings
from tools.providers.llama_cpu import (
    PROVIDER_LABEL,
    RELEVANT_CPU_FLAGS,
    RepackingPlan,
    WeightRepacking,
    cpu_model_name,
    missing_instructions,
    open_llama,
    parse_build_features,
    plan_weight_repacking,
    read_cpu_flags,
    unsupported_build_message,
)
from tools.providers.model_cache import exclusive_lock

log = logging.getLogger(__name__)

VERDICTS_FILENAME = "llama-probe.json"
PROBE_TIMEOUT_S = 600.0  # a cold 1.1 GB model read from a slow disk, plus one token


class ProbeResult(BaseModel):
    """What one child process reported, or how it died."""

    ok: bool
    detail: str
    seconds: float = 0.0
    system_info: str = ""
    signal_name: str | None = None
    use_extra_buffers: bool | None = None  # the LLM test: the layout it ran with, and why
    reason: str = ""


class LlamaVerdict(BaseModel):
    """The remembered decision for one (build, CPU, model, setting)."""

    use_extra_buffers: bool
    reason: str
    system_info: str
    checked_at: str


def llama_library_dir() -> Path | None:
    """Where the installed llama.cpp libraries are, found without loading them (loading might crash)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if (Path(location) / "lib").is_dir():
            return Path(location) / "lib"
    return None


def build_fingerprint(model_path: Path, setting: WeightRepacking) -> str:
    """Changes whenever the verdict could: another llama.cpp build, CPU, model file or setting."""
    library_dir = llama_library_dir()
    libraries = sorted(library_dir.iterdir()) if library_dir else []
    parts = [
        installed_version("llama-cpp-python"),
        str(library_dir),
        *(f"{lib.name}:{lib.stat().st_size}:{lib.stat().st_mtime_ns}" for lib in libraries if lib.is_file()),
        cpu_model_name(),
        " ".join(sorted(read_cpu_flags() & set(RELEVANT_CPU_FLAGS))),
        model_path.name,
        str(model_path.stat().st_size) if model_path.exists() else "-",
        setting,
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, or 'not installed'."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def run_child(args: list[str], timeout_s: float = PROBE_TIMEOUT_S) -> ProbeResult:
    """Run ``python -m tools.providers.native_probe ARGS`` and read its one-line JSON verdict."""
    started = time.perf_counter()
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}  # the child's stderr then shows where it died
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, *args],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(ok=False, detail=f"no answer within {timeout_s:.0f} s")
    seconds = time.perf_counter() - started
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        return ProbeResult(
            ok=False, signal_name=name, seconds=seconds, detail=f"the child process was killed by {name}"
        )
    lines = done.stdout.strip().splitlines()
    try:
        reported = ProbeResult.model_validate_json(lines[-1]) if lines else None
    except ValueError:
        reported = None
    if reported is None:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])
        return ProbeResult(ok=False, seconds=seconds, detail=f"exit code {done.returncode}: {tail}")
    return reported


def probe_llm(model_path: Path, setting: WeightRepacking, num_threads: int) -> ProbeResult:
    """Load the model in a child with this repacking setting and decode one token."""
    return run_child(["llm", str(model_path), "--repacking", setting, "--threads", str(num_threads)])


def safe_weight_repacking(model_path: Path, setting: WeightRepacking, num_threads: int) -> LlamaVerdict:
    """The repacking choice that survived a one-token test in a child, remembered per build and CPU.

    Raises ProviderUnavailable with the cause and the settings that avoid it when no choice survives.
    """
    key = build_fingerprint(model_path, setting)
    verdicts_path = model_path.parent / VERDICTS_FILENAME
    remembered = _read_verdicts(verdicts_path).get(key)
    if remembered is not None:
        return remembered
    with exclusive_lock(model_path.parent / f"{VERDICTS_FILENAME}.lock"):
        remembered = _read_verdicts(verdicts_path).get(key)  # another process may have just probed
        if remembered is not None:
            return remembered
        verdict = _probe_until_safe(model_path, setting, num_threads)
        verdicts = _read_verdicts(verdicts_path)
        verdicts[key] = verdict
        _write_verdicts(verdicts_path, verdicts)
    return verdict


def _probe_until_safe(model_path: Path, setting: WeightRepacking, num_threads: int) -> LlamaVerdict:
    result = probe_llm(model_path, setting, num_threads)
    if result.ok:
        return _verdict(result.use_extra_buffers is not False, result.reason, result)
    if result.signal_name and setting == "auto":
        # auto tried both layouts in one child; find the one that survives on its own.
        log.warning("the local LLM %s in a one-token test; trying each weight layout alone", result.detail)
        fallbacks: tuple[tuple[WeightRepacking, str], ...] = (("off", "not repacked"), ("on", "repacked"))
        for layout, label in fallbacks:
            retry = probe_llm(model_path, layout, num_threads)
            if retry.ok:
                reason = (
                    f"the one-token test of both layouts {result.detail}; weights {label} ran, so that "
                    "layout is used (reinstalling with `bash scripts/setup.sh` may make both safe)"
                )
                log.warning("local LLM: %s", reason)
                return _verdict(layout == "on", reason, retry)
    raise ProviderUnavailable(PROVIDER_LABEL, crash_message(model_path, result, setting))


def _verdict(use_extra_buffers: bool, reason: str, result: ProbeResult) -> LlamaVerdict:
    return LlamaVerdict(
        use_extra_buffers=use_extra_buffers,
        reason=reason,
        system_info=result.system_info,
        checked_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def crash_message(model_path: Path, result: ProbeResult, setting: WeightRepacking) -> str:
    """One message naming what failed, on which CPU, and what to set instead."""
    flags = " ".join(sorted(read_cpu_flags() & set(RELEVANT_CPU_FLAGS))) or "unknown"
    if result.signal_name:
        cause = f"llama.cpp {result.detail} while decoding one token of {model_path.name}"
    else:
        cause = f"a one-token test of {model_path.name} failed: {result.detail}"
    avoid = (
        "reinstall llama-cpp-python for this CPU with `bash scripts/setup.sh`, "
        "or set OPENAI_API_KEY / llm.base_url to use a hosted model"
    )
    if setting != "off":
        avoid = "set RAGPILOT_LLM__WEIGHT_REPACKING=off, " + avoid
    return f"{cause} (CPU: {cpu_model_name()}; flags: {flags}); {avoid}. `ragpilot doctor` shows the details"


def _read_verdicts(path: Path) -> dict[str, LlamaVerdict]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {key: LlamaVerdict.model_validate(value) for key, value in raw.items()}
    except (OSError, ValueError, AttributeError):
        return {}  # absent or unreadable: probe again (cheap compared with a crash)


def _write_verdicts(path: Path, verdicts: dict[str, LlamaVerdict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    payload = {key: verdict.model_dump() for key, verdict in verdicts.items()}
    tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# ---- the child side -------------------------------------------------------------------------------


def _child_llm(model_path: str, setting: WeightRepacking, num_threads: int) -> ProbeResult:
    started = time.perf_counter()
    system_info = llama_system_info()
    build_features = parse_build_features(system_info)
    missing = missing_instructions(read_cpu_flags(), build_features)
    if missing:
        return ProbeResult(ok=False, detail=unsupported_build_message(missing), system_info=system_info)
    plan = plan_weight_repacking(setting, read_cpu_flags(), build_features)
    layouts = [True, False] if setting == "auto" and plan.use_extra_buffers else [plan.use_extra_buffers]
    turn_seconds: dict[bool, float] = {}
    for use_extra_buffers in layouts:
        llama = open_llama(Path(model_path), 1024, num_threads, use_extra_buffers)
        reply = llama.create_completion("The capital of France is", max_tokens=1, temperature=0)
        if len(layouts) > 1:
            turn_seconds[use_extra_buffers] = _estimated_turn_seconds(llama)
        llama.close()
    detail = f"decoded one token ({reply['choices'][0]['text']!r})"
    if turn_seconds:
        # Which layout is faster depends on the CPU and the build: measured, not assumed. On an AVX-512
        # build unrepacked weights evaluated prompts ~1.4x faster; on an AVX2 build the repack tied on
        # prompts and won on generation (bench/results/llm-*.json).
        use = min(turn_seconds, key=turn_seconds.__getitem__)
        plan = RepackingPlan(
            use,
            f"measured on this machine, one answer (1,500 prompt tokens, 60 generated) takes "
            f"{turn_seconds[True]:.1f} s with repacked weights and {turn_seconds[False]:.1f} s without: "
            f"{'repacked' if use else 'not repacked'} is used",
        )
    return ProbeResult(
        ok=True,
        detail=detail,
        seconds=round(time.perf_counter() - started, 2),
        system_info=system_info,
        use_extra_buffers=plan.use_extra_buffers,
        reason=plan.reason,
    )


_TIMING_PROMPT = " ".join(
    f"Passage {i}: the harbour office logged ships, cargo and tides." for i in range(24)
)


def _estimated_turn_seconds(llama: Any) -> float:
    """Seconds for one RAG answer (1,500 prompt tokens, 60 generated), scaled from a short measurement."""
    llama.reset()
    started = time.perf_counter()
    reply = llama.create_completion(_TIMING_PROMPT, max_tokens=1, temperature=0)
    per_prompt_token = (time.perf_counter() - started) / max(reply["usage"]["prompt_tokens"], 1)
    llama.reset()
    started = time.perf_counter()
    reply = llama.create_completion("Count: one, two,", max_tokens=16, temperature=0)
    per_generated_token = (time.perf_counter() - started) / max(reply["usage"]["completion_tokens"], 1)
    return 1500 * per_prompt_token + 60 * per_generated_token


def llama_system_info() -> str:
    """llama.cpp's compiled-in CPU features, e.g. ``CPU : SSE3 = 1 | AVX2 = 1 | ... | REPACK = 1 |``."""
    import llama_cpp

    return llama_cpp.llama_print_system_info().decode(errors="replace")


def probe_embedder(options: EmbedderSettings, model_cache_dir: Path) -> ProbeResult:
    """Embed one query in a child process with these embedder options (the doctor's smoke test)."""
    return run_child(
        ["embedder", "--options", options.model_dump_json(), "--models-dir", str(model_cache_dir)]
    )


def _child_embedder(options: EmbedderSettings, model_cache_dir: Path) -> ProbeResult:
    from tools.providers.embedder_factory import build_local_e5

    started = time.perf_counter()
    embedder = build_local_e5(options, model_cache_dir)
    vector = embedder.embed_query("how many days of annual leave")
    norm = float((vector**2).sum() ** 0.5)
    ok = vector.shape == (384,) and abs(norm - 1.0) < 1e-3
    return ProbeResult(
        ok=ok,
        detail=f"one {vector.shape[0]}-d query embedding by {embedder.engine}, norm {norm:.3f}",
        seconds=round(time.perf_counter() - started, 2),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="ragpilot's native smoke tests (run as a child process)")
    sub = parser.add_subparsers(dest="what", required=True)
    llm = sub.add_parser("llm")
    llm.add_argument("model")
    llm.add_argument("--repacking", choices=("auto", "on", "off"), default="auto")
    llm.add_argument("--threads", type=int, default=1)
    embedder = sub.add_parser("embedder")
    embedder.add_argument("--options", required=True, help="the embedder section, as JSON")
    embedder.add_argument("--models-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.what == "llm":
            result = _child_llm(args.model, args.repacking, args.threads)
        else:
            result = _child_embedder(EmbedderSettings.model_validate_json(args.options), args.models_dir)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as the verdict
        result = ProbeResult(ok=False, detail=f"{type(exc).__name__}: {exc}")
    print(result.model_dump_json())
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
