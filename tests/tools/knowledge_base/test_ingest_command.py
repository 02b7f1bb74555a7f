"""``ragpilot ingest`` through typer's CliRunner: report formats, overrides and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from core.settings import load_settings
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.knowledge_base.sparse import FOLDING_ENCODER
from tools.knowledge_base.store.edge import EdgeStore

runner = CliRunner()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\nBackups run nightly at two o'clock.\n", encoding="utf-8")
    (folder / "faq.md").write_text("# FAQ\n\nPasswords expire after ninety days.\n", encoding="utf-8")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n")
    return folder


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["ingest", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_report_and_exit_code_zero_even_with_skipped_files(ragpilot_home, docs):
    code, out, _ = run(str(docs), "--json")
    assert code == 0
    report = json.loads(out)
    assert (report["added"], report["unchanged"], report["removed"]) == (2, 0, 0)
    assert report["skipped"] == [
        {"source": (docs / "logo.png").as_posix(), "reason": "unsupported file type"}
    ]
    again = json.loads(run(str(docs), "--json")[1])
    assert (again["added"], again["unchanged"], again["embedded"]) == (0, 2, 0)


def test_the_table_report_lists_counts_and_skipped_reasons(ragpilot_home, docs):
    code, out, _ = run(str(docs))
    assert code == 0
    assert "added" in out and "unchanged" in out and "chunks written" in out
    assert "logo.png: unsupported file type" in out


def test_acl_and_chunker_options_reach_the_stored_chunks(ragpilot_home, docs):
    code, _, _ = run(
        str(docs / "guide.md"), "--acl", "ops", "--acl", "admins", "--chunker", "sentence_window"
    )
    assert code == 0
    with KnowledgeBase.open(load_settings()) as kb:
        chunks = [c for c in kb.store.scroll(None) if c.kind != "summary"]
    assert chunks and all(c.acl == ["ops", "admins"] and c.chunker == "sentence_window" for c in chunks)


def test_prune_and_optimize(ragpilot_home, docs):
    run(str(docs))
    (docs / "faq.md").unlink()
    code, out, _ = run(str(docs), "--prune", "--optimize", "--json")
    report = json.loads(out)
    assert code == 0 and report["removed"] == 1 and report["optimized"] in (True, False)


def test_exit_code_one_when_nothing_could_be_ingested(ragpilot_home, tmp_path):
    (tmp_path / "empty.md").write_text("", encoding="utf-8")
    code, out, _ = run(str(tmp_path / "empty.md"), str(tmp_path / "missing.md"), "--json")
    assert code == 1
    assert {Path(s["source"]).name: s["reason"] for s in json.loads(out)["skipped"]} == {
        "empty.md": "empty file",
        "missing.md": "no such file or directory",
    }


def test_exit_code_two_for_an_invalid_setting_naming_it(ragpilot_home, docs):
    code, _, err = run(str(docs), "--chunk-tokens", "8")
    assert code == 2
    assert "chunking.chunk_tokens" in err


def test_exit_code_two_when_another_process_holds_the_index(ragpilot_home, docs):
    settings = load_settings()
    holder = EdgeStore(settings.index_dir, sparse_encoder=FOLDING_ENCODER)
    try:
        code, _, err = run(str(docs))
    finally:
        holder.close()
    assert code == 2
    assert str(settings.index_dir) in err and "already open" in err
