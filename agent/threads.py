"""Chat threads over the graph's checkpointer: list, show, delete, and prune what storage holds.

A thread is every checkpoint saved under one ``thread_id``. Its latest checkpoint holds the
conversation (``messages``: a question and an answer per turn) and the last answer's citations.
Storage grows in two ways, and pruning bounds both:

- each turn saves one checkpoint per graph step (the SQLite saver stores full snapshots), so
  ``compact`` keeps only the latest ``settings.chat.keep_checkpoints`` per thread;
- threads accumulate, so ``prune`` deletes threads untouched for ``settings.chat.retention_days``.

Works with the SQLite saver (what it lacks is in ``threads_sqlite``), the Postgres saver (its own ``prune``) and the
in-memory saver (through the generic checkpointer API).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel, Field

from agent import threads_sqlite
from core.errors import RagpilotError
from core.settings import Settings

ROOT_NAMESPACE = ""


class ThreadError(RagpilotError):
    """A thread does not exist, or the checkpointer cannot do what was asked; names the thread id."""


class ThreadSummary(BaseModel):
    thread_id: str
    updated_at: datetime
    turns: int = Field(description="questions asked in this thread")
    first_question: str | None = None
    checkpoints: int | None = Field(
        None, description="checkpoints stored (SQLite only; None when not counted)"
    )


class ThreadMessage(BaseModel):
    role: str
    content: str


class ThreadTurn(BaseModel):
    question: str
    answer: str | None = None


class ThreadDetail(BaseModel):
    """What a thread holds: its turns, the raw messages, and the last answer's sources."""

    thread_id: str
    updated_at: datetime
    turns: list[ThreadTurn]
    messages: list[ThreadMessage]
    last_citations: list[dict[str, Any]] = Field(default_factory=list)


class PruneReport(BaseModel):
    threads_deleted: list[str] = Field(default_factory=list)
    checkpoints_deleted: int = Field(
        default=0, description="older checkpoints of kept threads (SQLite counts them)"
    )
    threads_compacted: int = 0


def _content_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
    return "".join(parts)


def _turns(messages: Iterable[BaseMessage]) -> list[ThreadTurn]:
    """Pair each human message with the AI message answering it (the last one before the next question)."""
    turns: list[ThreadTurn] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            turns.append(ThreadTurn(question=_content_text(message)))
        elif isinstance(message, AIMessage) and turns and not message.tool_calls:
            turns[-1].answer = _content_text(message)
    return turns


def _checkpoint_time(checkpoint: CheckpointTuple) -> datetime:
    stamp = datetime.fromisoformat(checkpoint.checkpoint["ts"])
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


class ThreadStore:
    """Thread management over one checkpointer (the same one the agent graph was compiled with)."""

    def __init__(self, checkpointer: BaseCheckpointSaver, *, keep_checkpoints: int = 2) -> None:
        if keep_checkpoints < 1:
            raise ThreadError(
                "chat.keep_checkpoints must be at least 1 (the latest checkpoint is the thread)"
            )
        self.checkpointer = checkpointer
        self.keep_checkpoints = keep_checkpoints

    @classmethod
    @contextmanager
    def open(cls, settings: Settings) -> Iterator[ThreadStore]:
        """Open the configured checkpointer (``settings.chat.checkpointer``) for thread management."""
        from graphs.rag.checkpointer import open_checkpointer

        checkpointer = open_checkpointer(settings)
        try:
            yield cls(checkpointer, keep_checkpoints=settings.chat.keep_checkpoints)
        finally:
            connection = getattr(checkpointer, "conn", None)  # SQLite / Postgres savers own one
            if connection is not None and hasattr(connection, "close"):
                connection.close()

    # -- reading -----------------------------------------------------------------------------------
    def thread_ids(self) -> list[str]:
        if isinstance(self.checkpointer, SqliteSaver):
            return threads_sqlite.thread_ids(self.checkpointer)
        # Generic path (Postgres, memory): every checkpoint is listed; pruning keeps this small.
        seen: dict[str, None] = {}
        for checkpoint in self.checkpointer.list(None):
            seen.setdefault(str(checkpoint.config["configurable"]["thread_id"]), None)
        return list(seen)

    def _latest(self, thread_id: str) -> CheckpointTuple | None:
        config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NAMESPACE}}
        return self.checkpointer.get_tuple(config)

    def _checkpoint_counts(self) -> dict[str, int]:
        if not isinstance(self.checkpointer, SqliteSaver):
            return {}
        return threads_sqlite.checkpoint_counts(self.checkpointer)

    def list_threads(self) -> list[ThreadSummary]:
        """Every thread, most recently updated first."""
        counts = self._checkpoint_counts()
        summaries = []
        for thread_id in self.thread_ids():
            latest = self._latest(thread_id)
            if latest is None:
                continue
            turns = _turns(latest.checkpoint["channel_values"].get("messages", []))
            summaries.append(
                ThreadSummary(
                    thread_id=thread_id,
                    updated_at=_checkpoint_time(latest),
                    turns=len(turns),
                    first_question=turns[0].question if turns else None,
                    checkpoints=counts.get(thread_id),
                )
            )
        return sorted(summaries, key=lambda s: s.updated_at, reverse=True)

    def get_thread(self, thread_id: str) -> ThreadDetail:
        """The thread's conversation; raises ``ThreadError`` when no checkpoint has this id."""
        latest = self._latest(thread_id)
        if latest is None:
            raise ThreadError(f"no thread {thread_id!r}")
        values = latest.checkpoint["channel_values"]
        messages = list(values.get("messages", []))
        return ThreadDetail(
            thread_id=thread_id,
            updated_at=_checkpoint_time(latest),
            turns=_turns(messages),
            messages=[ThreadMessage(role=m.type, content=_content_text(m)) for m in messages],
            last_citations=list(values.get("citations") or []),
        )

    def exists(self, thread_id: str) -> bool:
        return self._latest(thread_id) is not None

    # -- deleting ----------------------------------------------------------------------------------
    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and pending write of a thread; ``ThreadError`` if there is none."""
        if not self.exists(thread_id):
            raise ThreadError(f"no thread {thread_id!r}")
        self.checkpointer.delete_thread(thread_id)

    def compact(self, thread_ids: Iterable[str] | None = None) -> int:
        """Keep only the latest ``keep_checkpoints`` checkpoints of each thread (all threads by default).

        Returns how many checkpoints were removed (Postgres does not report it: 0). The latest
        checkpoint and its pending writes always stay, so the conversation is intact.
        """
        ids = list(thread_ids) if thread_ids is not None else self.thread_ids()
        if not ids:
            return 0
        if isinstance(self.checkpointer, SqliteSaver):
            return threads_sqlite.keep_latest(self.checkpointer, ids, self.keep_checkpoints)
        if isinstance(self.checkpointer, InMemorySaver):
            return 0  # nothing persists; the process exit frees it
        # The Postgres saver keeps exactly the latest checkpoint per namespace (its documented prune).
        self.checkpointer.prune(ids, strategy="keep_latest")
        return 0

    def prune(self, retention_days: float, *, now: datetime | None = None) -> PruneReport:
        """Delete threads untouched for ``retention_days``, then compact the rest."""
        if retention_days <= 0:
            raise ThreadError("chat.retention_days must be positive")
        cutoff = (now or datetime.now(UTC)) - timedelta(days=retention_days)
        report = PruneReport()
        kept: list[str] = []
        for thread_id in self.thread_ids():
            latest = self._latest(thread_id)
            if latest is not None and _checkpoint_time(latest) < cutoff:
                self.checkpointer.delete_thread(thread_id)
                report.threads_deleted.append(thread_id)
            else:
                kept.append(thread_id)
        report.checkpoints_deleted = self.compact(kept)
        report.threads_compacted = len(kept)
        self.reclaim_space()
        return report

    def reclaim_space(self) -> None:
        """Give freed SQLite pages back to the file system (deleted rows otherwise keep the file large)."""
        if isinstance(self.checkpointer, SqliteSaver):
            threads_sqlite.reclaim_space(self.checkpointer)
