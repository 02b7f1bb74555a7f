"""Thread management over a real SQLite checkpointer (and the generic in-memory path)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from agent.threads import ThreadError, ThreadStore
from tests.agent.tiny_rag_graph import build_tiny_graph


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


def _ask(graph, thread_id: str, question: str) -> dict:
    return graph.invoke({"question": question}, {"configurable": {"thread_id": thread_id}})


def _checkpoints(saver: SqliteSaver, thread_id: str) -> int:
    with saver.cursor(transaction=False) as cur:
        return cur.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (thread_id,)).fetchone()[0]


def test_list_shows_turns_and_first_question_newest_first(saver: SqliteSaver) -> None:
    graph = build_tiny_graph(saver)
    _ask(graph, "t-old", "What is the Falcon latency?")
    _ask(graph, "t-new", "What is the Heron latency?")
    _ask(graph, "t-new", "And Falcon?")
    summaries = ThreadStore(saver).list_threads()
    assert [s.thread_id for s in summaries] == ["t-new", "t-old"]
    assert summaries[0].turns == 2 and summaries[0].first_question == "What is the Heron latency?"
    assert summaries[1].turns == 1
    assert summaries[0].checkpoints == _checkpoints(saver, "t-new") > 2


def test_show_pairs_questions_with_answers(saver: SqliteSaver) -> None:
    graph = build_tiny_graph(saver)
    _ask(graph, "t", "What is the Falcon latency?")
    _ask(graph, "t", "Unknown zebra")
    detail = ThreadStore(saver).get_thread("t")
    assert [turn.question for turn in detail.turns] == ["What is the Falcon latency?", "Unknown zebra"]
    assert "40 ms" in detail.turns[0].answer and detail.turns[1].answer == "The sources do not say."
    assert [m.role for m in detail.messages] == ["human", "ai", "human", "ai"]


def test_unknown_thread_is_a_thread_error(saver: SqliteSaver) -> None:
    store = ThreadStore(saver)
    with pytest.raises(ThreadError, match="no thread 'missing'"):
        store.get_thread("missing")
    with pytest.raises(ThreadError, match="no thread 'missing'"):
        store.delete_thread("missing")


def test_delete_removes_only_that_thread(saver: SqliteSaver) -> None:
    graph = build_tiny_graph(saver)
    _ask(graph, "keep", "Falcon?")
    _ask(graph, "drop", "Heron?")
    store = ThreadStore(saver)
    store.delete_thread("drop")
    assert [s.thread_id for s in store.list_threads()] == ["keep"]
    with saver.cursor(transaction=False) as cur:
        assert cur.execute("SELECT COUNT(*) FROM writes WHERE thread_id = 'drop'").fetchone()[0] == 0


def test_compact_keeps_the_latest_checkpoints_and_the_conversation_goes_on(saver: SqliteSaver) -> None:
    graph = build_tiny_graph(saver)
    for question in ("Falcon?", "Heron?"):
        _ask(graph, "t", question)
    before = _checkpoints(saver, "t")
    removed = ThreadStore(saver, keep_checkpoints=2).compact()
    assert _checkpoints(saver, "t") == 2 and removed == before - 2
    state = _ask(graph, "t", "Falcon again?")
    # The third turn saw the two earlier turns (4 messages) in its history.
    assert state["steps"][0]["decision"]["history_turns"] == 4
    assert [t.question for t in ThreadStore(saver).get_thread("t").turns] == [
        "Falcon?",
        "Heron?",
        "Falcon again?",
    ]


def test_prune_deletes_threads_past_retention_and_compacts_the_rest(saver: SqliteSaver) -> None:
    graph = build_tiny_graph(saver)
    _ask(graph, "a", "Falcon?")
    _ask(graph, "b", "Heron?")
    store = ThreadStore(saver, keep_checkpoints=1)
    report = store.prune(retention_days=30)  # both are fresh
    assert report.threads_deleted == [] and report.threads_compacted == 2
    assert _checkpoints(saver, "a") == _checkpoints(saver, "b") == 1
    report = store.prune(retention_days=30, now=datetime.now(UTC) + timedelta(days=31))
    assert sorted(report.threads_deleted) == ["a", "b"] and store.list_threads() == []


def test_prune_gives_space_back_to_the_file_system(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_tiny_graph(saver)
    for turn in range(15):
        _ask(graph, "long", f"Falcon question {turn}?")
    store = ThreadStore(saver, keep_checkpoints=1)
    store.reclaim_space()
    size_before = (tmp_path / "threads.sqlite").stat().st_size
    store.prune(retention_days=30)
    assert (tmp_path / "threads.sqlite").stat().st_size < size_before / 2
    assert len(store.get_thread("long").turns) == 15


def test_invalid_retention_and_keep_are_named(saver: SqliteSaver) -> None:
    with pytest.raises(ThreadError, match="keep_checkpoints"):
        ThreadStore(saver, keep_checkpoints=0)
    with pytest.raises(ThreadError, match="retention_days"):
        ThreadStore(saver).prune(retention_days=0)


def test_generic_checkpointer_path_lists_and_deletes() -> None:
    saver = InMemorySaver()
    graph = build_tiny_graph(saver)
    _ask(graph, "m1", "Falcon?")
    _ask(graph, "m2", "Heron?")
    store = ThreadStore(saver)
    assert sorted(s.thread_id for s in store.list_threads()) == ["m1", "m2"]
    assert store.list_threads()[0].checkpoints is None
    store.delete_thread("m1")
    assert [s.thread_id for s in store.list_threads()] == ["m2"]
