"""``Agent``: the Python entry point. ``Agent().ask("question") -> Answer``.

One ``Agent`` holds the collaborators (models, knowledge base) and two compilations of the same graph:
``graph`` keeps threads in the checkpointer (SQLite at ``settings.threads_db`` by default) and is used
when a ``thread_id`` is given; a stateless one serves one-off questions, so they leave no checkpoints.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from agent.run_loop import RunEvent, run_to_answer, stream_answer
from agent.tracing.recorder import TraceSink
from core.answer import Answer, Citation, SupportVerdict
from core.errors import ConfigError
from core.settings import QuestionBudget, Settings, load_settings
from core.vocabulary import ROUTE_REQUESTS
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

    def run_request(
        self,
        question: str,
        *,
        thread_id: str | None = None,
        groups: Sequence[str] | None = None,
        route: str | None = None,
        budget: QuestionBudget | None = None,
        run_id: str | None = None,
        history: Sequence[BaseMessage] | None = None,
    ) -> tuple[dict[str, Any], RunnableConfig]:
        """The graph input and run config for one turn (run with ``graph_for(thread_id)``). ``budget``
        replaces the limits it sets in ``settings.graph.budget`` for this turn (the HTTP API narrows it to
        the server's own first: ``QuestionBudget.tightened_by``). ``history`` is the conversation so far
        when the caller keeps it (OpenAI-style clients send every message each time); a thread keeps its
        own, so the two do not mix."""
        if history and thread_id:
            raise ConfigError("a turn continues either a thread or a caller's history, not both")
        if route is not None and route not in ROUTE_REQUESTS:
            raise ConfigError(f"route must be one of {', '.join(ROUTE_REQUESTS)}, got {route!r}")
        if groups is not None and (
            isinstance(groups, str) or not groups or not all(g.strip() for g in groups)
        ):
            raise ConfigError("groups must be a non-empty list of non-empty group names")
        configurable: dict[str, Any] = {"user_groups": list(groups or self.settings.user_groups)}
        if thread_id:
            configurable["thread_id"] = thread_id
        if budget is not None:
            configurable["budget"] = self.settings.graph.budget.model_copy(
                update=budget.model_dump(exclude_unset=True)
            )
        config: RunnableConfig = {
            "configurable": configurable,
            "run_id": uuid.UUID(hex=run_id) if run_id else uuid.uuid4(),
            "run_name": "ragpilot",
            "recursion_limit": 100,  # never reached: every loop has its own bound in settings.graph
        }
        graph_input: dict[str, Any] = {"question": question, "route_request": route or "auto"}
        if history:
            graph_input["messages"] = list(history)
        return graph_input, config

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

    def answer_from_state(
        self, state: dict[str, Any], *, run_id: str, total_ms: float = 0.0, thread_id: str | None = None
    ) -> Answer:
        """The typed ``Answer`` of a finished turn's state (full state or the graph's output)."""
        return answer_from_state(state, run_id=run_id, total_ms=total_ms, thread_id=thread_id)

    def close(self) -> None:
        self.resources.close()


def answer_from_state(
    state: dict[str, Any], *, run_id: str, total_ms: float = 0.0, thread_id: str | None = None
) -> Answer:
    timings: dict[str, float] = {}
    for step in state.get("steps") or []:
        timings[step["node"]] = round(timings.get(step["node"], 0.0) + float(step["ms"]), 1)
    return Answer(
        question=state.get("question", ""),
        answer=state.get("answer", ""),
        short_answer=state.get("short_answer") or "",
        citations=[Citation.model_validate(c) for c in state.get("citations") or []],
        route=state.get("route"),
        route_confidence=state.get("route_confidence"),
        crag_grade=state.get("crag_grade"),
        crag_action=state.get("crag_action"),
        refused=bool(state.get("refused")),
        refusal_reason=state.get("refusal_reason"),
        partial=bool(state.get("budget_exhausted")) and not state.get("refused"),
        budget_exhausted=state.get("budget_exhausted"),
        support=[SupportVerdict.model_validate(v) for v in state.get("support") or []],
        answers_question=state.get("answers_question"),
        queries=list(state.get("queries_issued") or []),
        llm_calls=int(state.get("llm_calls") or 0),
        llm_input_tokens=int(state.get("llm_input_tokens") or 0),
        llm_output_tokens=int(state.get("llm_output_tokens") or 0),
        timings=timings,
        total_ms=round(total_ms, 1),
        run_id=run_id,
        thread_id=thread_id,
        standalone_question=state.get("standalone_question"),
    )
