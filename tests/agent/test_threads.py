"""Thread management: one conformance suite run on every persistent checkpointer ragpilot offers, a real
SQLite file and a real PostgreSQL server (tests/servers/postgres.py), plus the generic in-memory path.

The one documented difference: compacting keeps exactly ``keep_checkpoints`` checkpoints per thread on
SQLite, and exactly the latest one on Postgres (the Postgres saver's own ``keep_latest`` prune).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from agent.threads import ThreadError, ThreadStore
from tests.agent.tiny_rag_graph import build_tiny_graph


@dataclass
class Backend:
    kind: str
    saver: BaseCheckpointSaver[Any]
    checkpoints: Callable[[str], int]  # checkpoints stored for a thread id
    writes: Callable[[str], int]  # pending writes stored for a thread id

    def kept_after_compact(self, keep: int) -> int:
        return keep if self.kind == "sqlite" else 1


def _sqlite_backend(path: Path) -> Iterator[Backend]:
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)

    def count(table: str, thread_id: str) -> int:
        with saver.cursor(transaction=False) as cur:
            return cur.execute(f"SELECT COUNT(*) FROM {table} WHERE thread_id = ?", (thread_id,)).fetchone()[
                0
            ]

    yield Backend("sqlite", saver, lambda t: count("checkpoints", t), lambda t: count("writes", t))
    conn.close()


def _postgres_backend(url: str) -> Iterator[Backend]:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    conn = Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    saver = PostgresSaver(conn)
    saver.setup()

    def count(table: str, thread_id: str) -> int:
        row = conn.execute(f"SELECT COUNT(*) AS n FROM {table} WHERE thread_id = %s", (thread_id,)).fetchone()
        return int(row["n"]) if row else 0

    yield Backend(
        "postgres", saver, lambda t: count("checkpoints", t), lambda t: count("checkpoint_writes", t)
    )
    conn.close()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield from _sqlite_backend(tmp_path / "threads.sqlite")
    else:
        server = request.getfixturevalue("postgres_server")
        yield from _postgres_backend(server.new_database("threads"))


def _ask(graph, thread_id: str, question: str) -> dict:
    return graph.invoke({"question": question}, {"configurable": {"thread_id": thread_id}})


def test_list_shows_turns_and_first_question_newest_first(backend: Backend) -> None:
    saver = backend.saver
    graph = build_tiny_graph(saver)
    _ask(graph, "t-old", "What is the Falcon latency?")
    _ask(graph, "t-new", "What is the Heron latency?")
    _ask(graph, "t-new", "And Falcon?")
    summaries = ThreadStore(saver).list_threads()
    assert [s.thread_id for s in summaries] == ["t-new", "t-old"]
    assert summaries[0].turns == 2 and summaries[0].first_question == "What is the Heron latency?"
    assert summaries[1].turns == 1
    if backend.kind == "sqlite":  # the SQLite store counts them; others report None
        assert summaries[0].checkpoints == backend.checkpoints("t-new") > 2
    else:
        assert summaries[0].checkpoints is None and backend.checkpoints("t-new") > 2


def test_show_pairs_questions_with_answers(backend: Backend) -> None:
    saver = backend.saver
    graph = build_tiny_graph(saver)
    _ask(graph, "t", "What is the Falcon latency?")
    _ask(graph, "t", "Unknown zebra")
    detail = ThreadStore(saver).get_thread("t")
    assert [turn.question for turn in detail.turns] == ["What is the Falcon latency?", "Unknown zebra"]
    assert "40 ms" in detail.turns[0].answer and detail.turns[1].answer == "The sources do not say."
    assert [m.role for m in detail.messages] == ["human", "ai", "human", "ai"]


def test_unknown_thread_is_a_thread_error(backend: Backend) -> None:
    saver = backend.saver
    store = ThreadStore(saver)
    with pytest.raises(ThreadError, match="no thread 'missing'"):
        store.get_thread("missing")
    with pytest.raises(ThreadError, match="no thread 'missing'"):
        store.delete_thread("missing")


def test_delete_removes_only_that_thread(backend: Backend) -> None:
    saver = backend.saver
    graph = build_tiny_graph(saver)
    _ask(graph, "keep", "Falcon?")
    _ask(graph, "drop", "Heron?")
    store = ThreadStore(saver)
    store.delete_thread("drop")
    assert [s.thread_id for s in store.list_threads()] == ["keep"]
    assert backend.checkpoints("drop") == backend.writes("drop") == 0
    assert backend.checkpoints("keep") > 0


def test_compact_keeps_the_latest_checkpoints_and_the_conversation_goes_on(backend: Backend) -> None:
    saver = backend.saver
    graph = build_tiny_graph(saver)
    for question in ("Falcon?", "Heron?"):
        _ask(graph, "t", question)
    before = backend.checkpoints("t")
    removed = ThreadStore(saver, keep_checkpoints=2).compact()
    kept = backend.kept_after_compact(2)
    assert backend.checkpoints("t") == kept
    assert removed == (before - kept if backend.kind == "sqlite" else 0)  # Postgres does not count
    state = _ask(graph, "t", "Falcon again?")
    # The third turn saw the two earlier turns (4 messages) in its history.
    assert state["steps"][0]["decision"]["history_turns"] == 4
    assert [t.question for t in ThreadStore(saver).get_thread("t").turns] == [
        "Falcon?",
        "Heron?",
        "Falcon again?",
    ]


def test_prune_deletes_threads_past_retention_and_compacts_the_rest(backend: Backend) -> None:
    saver = backend.saver
    graph = build_tiny_graph(saver)
    _ask(graph, "a", "Falcon?")
    _ask(graph, "b", "Heron?")
    store = ThreadStore(saver, keep_checkpoints=1)
    report = store.prune(retention_days=30)  # both are fresh
    assert report.threads_deleted == [] and report.threads_compacted == 2
    assert backend.checkpoints("a") == backend.checkpoints("b") == 1
    report = store.prune(retention_days=30, now=datetime.now(UTC) + timedelta(days=31))
    assert sorted(report.threads_deleted) == ["a", "b"] and store.list_threads() == []


def test_prune_gives_space_back_to_the_file_system(tmp_path: Path) -> None:
    # SQLite only: a file that must shrink.
    conn = sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    graph = build_tiny_graph(saver)
    for turn in range(15):
        _ask(graph, "long", f"Falcon question {turn}?")
    store = ThreadStore(saver, keep_checkpoints=1)
    store.reclaim_space()
    size_before = (tmp_path / "threads.sqlite").stat().st_size
    store.prune(retention_days=30)
    assert (tmp_path / "threads.sqlite").stat().st_size < size_before / 2
    assert len(store.get_thread("long").turns) == 15
    conn.close()


def test_invalid_retention_and_keep_are_named(backend: Backend) -> None:
    saver = backend.saver
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
