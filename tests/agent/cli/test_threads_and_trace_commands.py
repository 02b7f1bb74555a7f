"""``ragpilot threads ...`` and ``ragpilot trace ...`` over real stored data (tiny graph runs)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from typer.testing import CliRunner

from agent.cli import app
from core.settings import load_settings
from tests.agent.tiny_rag_graph import build_tiny_graph
from tests.agent.tracing.conftest import record_tiny_run

runner = CliRunner()


@pytest.fixture
def threads_on_disk(ragpilot_home: Path) -> Path:
    """Two threads in the SQLite checkpointer the CLI opens (``settings.threads_db``)."""
    db = load_settings().threads_db
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = build_tiny_graph(SqliteSaver(conn))
    for thread, question in (("t-falcon", "What is the Falcon latency?"), ("t-heron", "Heron latency?")):
        graph.invoke({"question": question}, {"configurable": {"thread_id": thread}})
    graph.invoke({"question": "And Falcon again?"}, {"configurable": {"thread_id": "t-falcon"}})
    conn.close()
    return db


def test_threads_list_shows_each_thread(threads_on_disk: Path) -> None:
    result = runner.invoke(app, ["threads", "list", "--json"])
    assert result.exit_code == 0, result.output
    threads = {t["thread_id"]: t for t in json.loads(result.output)["threads"]}
    assert (
        threads["t-falcon"]["turns"] == 2
        and threads["t-falcon"]["first_question"] == "What is the Falcon latency?"
    )
    assert threads["t-heron"]["turns"] == 1


def test_threads_show_prints_questions_and_answers(threads_on_disk: Path) -> None:
    result = runner.invoke(app, ["threads", "show", "t-falcon"])
    assert result.exit_code == 0, result.output
    assert "[1] Q: What is the Falcon latency?" in result.output and "40 ms" in result.output
    assert "[2] Q: And Falcon again?" in result.output


def test_threads_delete_and_unknown_thread(threads_on_disk: Path) -> None:
    assert runner.invoke(app, ["threads", "delete", "t-heron"]).exit_code == 0
    missing = runner.invoke(app, ["threads", "show", "t-heron"])
    assert missing.exit_code == 1 and "no thread 't-heron'" in missing.output


def test_threads_prune_reports_what_it_removed(threads_on_disk: Path) -> None:
    result = runner.invoke(app, ["threads", "prune", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["threads_deleted"] == [] and report["threads_compacted"] == 2
    assert report["checkpoints_deleted"] > 0
    assert "2 turns" in runner.invoke(app, ["threads", "list"]).output  # the conversation is intact


def test_trace_lists_replays_and_writes_html(ragpilot_home: Path, tmp_path: Path) -> None:
    traces = load_settings().traces_dir
    record_tiny_run(traces, "What is the Falcon latency?", run_id="run-cli")
    listing = runner.invoke(app, ["trace"])
    assert listing.exit_code == 0 and "run-cli" in listing.output and "4 steps" in listing.output
    replay = runner.invoke(app, ["trace", "last"])
    assert replay.exit_code == 0 and "retrieve" in replay.output and "dense #1" in replay.output
    page = tmp_path / "out" / "run.html"
    written = runner.invoke(app, ["trace", "run-cli", "--html", str(page)])
    assert written.exit_code == 0 and page.is_file()
    assert 'data-node="generate"' in page.read_text(encoding="utf-8")
    as_json = json.loads(runner.invoke(app, ["trace", "run-cli", "--json"]).output)
    assert [s["node"] for s in as_json["steps"]] == ["start_turn", "retrieve", "grade", "generate"]


def test_trace_of_an_unknown_run_is_a_clear_error(ragpilot_home: Path) -> None:
    result = runner.invoke(app, ["trace", "no-such-run"])
    assert result.exit_code == 2 and "no stored run 'no-such-run'" in result.output
    assert "not valid" in runner.invoke(app, ["trace", "../x"]).output
