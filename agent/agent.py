"""``Agent``: the Python entry point. ``Agent().ask("question") -> Answer``.

One ``Agent`` holds the collaborators (models, knowledge base) and two compilations of the same graph:
``graph`` keeps threads in the checkpointer (SQLite at ``settings.threads_db`` by default) and is used
when a ``thread_id`` is given; a stateless one serves one-off questions, so they leave no checkpoints.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from agent.run_loop import RunEvent, run_to_answer, stream_answer
from agent.tracing.recorder import TraceSink
from core.answer import Answer
from core.settings import QuestionBudget, Settings, load_settings
from graphs.rag.checkpointer import open_checkpointer
from graphs.rag.graph import build_graph
from graphs.rag.resources import Resources


class Agent:
    """Ask questions of the knowledge base through the agent graph.

    ``resources`` and ``checkpointer`` are injectable (tests, embedding apps); by default both are built
    from ``settings`` on first use.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        resources: Resources | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self.resources = resources or Resources(self.settings)
        self._checkpointer = checkpointer
        self._graph: CompiledStateGraph[Any, Any, Any, Any] | None = None
        self._stateless_graph: CompiledStateGraph[Any, Any, Any, Any] | None = None
        self._lock = threading.Lock()

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The compiled graph with the thread checkpointer (runs need ``configurable.thread_id``)."""
        with self._lock:
            if self._graph is None:
                if self._checkpointer is None:
                    self._checkpointer = open_checkpointer(self.settings)
                self._graph = build_graph(
                    self.settings, resources=self.resources, checkpointer=self._checkpointer
                )
            return self._graph

    @property
    def stateless_graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The same graph without a checkpointer, for questions outside any thread."""
        with self._lock:
            if self._stateless_graph is None:
                self._stateless_graph = build_graph(self.settings, resources=self.resources)
            return self._stateless_graph

    def graph_for(self, thread_id: str | None) -> CompiledStateGraph[Any, Any, Any, Any]:
        """``graph`` for a thread, ``stateless_graph`` without one."""
        return self.graph if thread_id else self.stateless_graph

    def stream(
        self,
        question: str,
        *,
        thread_id: str | None = None,
        groups: Sequence[str] | None = None,
        route: str | None = None,
        budget: QuestionBudget | None = None,
        run_id: str | None = None,
        sinks: Iterable[TraceSink] = (),
        tokens: bool = True,
    ) -> Iterator[RunEvent]:
        """One turn as events: each step as it finishes, the answer's tokens, then the ``FinalAnswer``.

        The same run loop as the CLI and the HTTP API (``agent.run_loop``): the run is traced under
        ``settings.traces_dir`` (``ragpilot trace`` replays it) and a thread's checkpoints are compacted.
        """
        return stream_answer(
            self, question, thread_id=thread_id, groups=list(groups) if groups is not None else None,
            route=route, budget=budget, run_id=run_id, sinks=sinks, tokens=tokens,
        )  # fmt: skip

    def ask(
        self,
        question: str,
        thread_id: str | None = None,
        groups: Sequence[str] | None = None,
        route: str | None = None,
        budget: QuestionBudget | None = None,
    ) -> Answer:
        """Answer ``question`` (continuing ``thread_id`` when given) as the caller ``groups``.

        ``route`` forces direct / single / iterative instead of the classifier ("auto"); ``budget`` sets
        this question's limits (seconds, LLM calls, tokens), past which the answer comes back partial.
        Traced and compacted like every run (see ``stream``)."""
        return run_to_answer(
            self, question, thread_id=thread_id, groups=list(groups) if groups is not None else None,
            route=route, budget=budget,
        )  # fmt: skip

    def close(self) -> None:
        self.resources.close()
