"""The local LLM is tried in a child process before first use: a crash there is a message, never a dead process.

Crashes are real: a stand-in ``llama_cpp`` package (put first on the child's PYTHONPATH) dereferences a
null pointer where llama.cpp's AMX path would, so the child really dies with SIGSEGV.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from core.errors import ProviderUnavailable
from core.settings import load_settings
from tools.providers.local_gguf import ensure_local_gguf
from tools.providers.native_probe import VERDICTS_FILENAME, safe_weight_repacking

FAKE_LLAMA_INIT = textwrap.dedent(
    '''
    """Stands in for llama_cpp in a child process: segfaults on the paths the test names."""
    import ctypes
    import os

    from . import llama_cpp as _native


    def llama_print_system_info():
        return b"CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | REPACK = 1 | "


    class Llama:
        def __init__(self, model_path, n_ctx, n_threads, verbose):
            crash = os.environ["FAKE_LLAMA_CRASH"]
            repacked = _native.llama_model_default_params().use_extra_bufts
            if crash == "always" or (crash == "repacked" and repacked):
                ctypes.string_at(0)  # a real segmentation fault

        def create_completion(self, prompt, max_tokens, temperature):
            usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": max_tokens}
            return {"choices": [{"text": " Paris"}], "usage": usage}

        def reset(self):
            pass

        def close(self):
            pass
    '''
)
FAKE_LLAMA_NATIVE = textwrap.dedent(
    """
    class _ModelParams:
        use_extra_bufts = True


    def llama_model_default_params():
        return _ModelParams()
    """
)


@pytest.fixture
def crashing_llama(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A model file, and a child-side llama_cpp that crashes as told by ``set_crash(...)``."""
    site = tmp_path / "fake-site" / "llama_cpp"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text(FAKE_LLAMA_INIT)
    (site / "llama_cpp.py").write_text(FAKE_LLAMA_NATIVE)
    monkeypatch.setenv("PYTHONPATH", str(site.parent))
    model = tmp_path / "models" / "model.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF" + b"\0" * 64)

    def set_crash(when: str) -> Path:
        monkeypatch.setenv("FAKE_LLAMA_CRASH", when)
        return model

    return set_crash


def remembered(model: Path) -> dict:
    path = model.parent / VERDICTS_FILENAME
    return json.loads(path.read_text()) if path.exists() else {}


def test_a_crash_with_repacked_weights_falls_back_to_unrepacked_weights_and_is_remembered(crashing_llama):
    model = crashing_llama("repacked")

    verdict = safe_weight_repacking(model, "auto", num_threads=1)

    assert verdict.use_extra_buffers is False
    assert "SIGSEGV" in verdict.reason and "not repacked ran" in verdict.reason
    assert "scripts/setup.sh" in verdict.reason
    assert [v["use_extra_buffers"] for v in remembered(model).values()] == [False]
    # Remembered: not probed again, so even a build that now always crashes is not started twice.
    crashing_llama("always")
    assert safe_weight_repacking(model, "auto", num_threads=1) == verdict


def test_a_crash_in_every_layout_is_one_message_naming_the_signal_the_cpu_and_the_settings(crashing_llama):
    model = crashing_llama("always")

    with pytest.raises(ProviderUnavailable) as failure:
        safe_weight_repacking(model, "auto", num_threads=1)

    message = str(failure.value)
    assert "killed by SIGSEGV" in message
    assert "CPU:" in message and "flags:" in message
    assert "scripts/setup.sh" in message and "OPENAI_API_KEY" in message
    assert "ragpilot doctor" in message
    assert remembered(model) == {}  # a failure is tried again next time: the user may have fixed it


def test_an_explicit_repacking_setting_that_crashes_is_reported_not_silently_overridden(crashing_llama):
    model = crashing_llama("repacked")

    with pytest.raises(ProviderUnavailable, match="RAGPILOT_LLM__WEIGHT_REPACKING=off"):
        safe_weight_repacking(model, "on", num_threads=1)
    assert safe_weight_repacking(model, "off", num_threads=1).use_extra_buffers is False


def test_when_both_layouts_run_the_faster_one_measured_here_is_chosen(crashing_llama):
    model = crashing_llama("never")

    verdict = safe_weight_repacking(model, "auto", num_threads=1)

    assert verdict.reason.startswith("measured on this machine")
    assert "with repacked weights" in verdict.reason and "without" in verdict.reason
    assert "AVX2 = 1" in verdict.system_info


@pytest.mark.llm
def test_the_real_model_passes_its_one_token_test(tmp_path):
    real = ensure_local_gguf(load_settings())
    model = tmp_path / real.name
    model.symlink_to(real)  # verdicts are kept beside the model: keep this test's apart

    verdict = safe_weight_repacking(model, "auto", num_threads=2)

    assert "REPACK = 1" in verdict.system_info
    assert len(remembered(model)) == 1


def test_a_corrupt_model_file_is_a_clear_error_from_the_real_llama_cpp(tmp_path):
    model = tmp_path / "broken.gguf"
    model.write_bytes(b"this is not a GGUF file" * 100)

    with pytest.raises(ProviderUnavailable, match="one-token test of broken.gguf failed: .*cannot load"):
        safe_weight_repacking(model, "auto", num_threads=1)
