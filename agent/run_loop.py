"""The one run loop: a turn of the agent graph as a stream of typed events, traced and compacted.

It owns a turn from end to end: the graph input, run config and run context (``turn_request``), the run, and the typed
``Answer`` read from the final state (``answer_from_state``). It sees the agent only as a ``TurnHost`` (its
settings and its two compiled graphs), so nothing here imports the facade that calls it.

Every entry point runs a turn through ``stream_answer``: ``Agent.ask`` / ``Agent.stream`` (the Python
API), ``ragpilot ask`` and ``chat``, the HTTP API's ``/ask`` and ``/ask/stream``, and ``ragpilot eval
qa``; so a trace, a fix or a new event reaches all of them at once. It wraps
``graph.stream(..., stream_mode=["updates", "messages", "values"])``:

- ``updates`` carry the step entries each node appends (recorded by a ``TraceRecorder`` into the run's
  JSONL file under ``settings.traces_dir``, and yielded as ``StepUpdate``);
- ``messages`` carry the chat model's tokens; only those produced inside the answer-writing nodes are
  yielded (``TokenDelta``), numbered by attempt so a regeneration after a failed support check can be
  shown as one;
- the last ``values`` chunk is the final state, turned into the ``Answer`` (``FinalAnswer``).

After a turn on a thread, the thread's checkpoints are compacted to ``chat.keep_checkpoints``.
"""

from __future__ import annotations

import time
import uuid
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, Protocol

from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StreamMode
from pydantic import BaseModel

from agent.threads import ThreadStore
from agent.tracing.events import GraphTopology, StepEvent
from agent.tracing.json_lines import JsonLinesPrinter
from agent.tracing.recorder import TraceRecorder, TraceSink
from agent.tracing.tree import LiveTreePrinter
from core.answer import Answer, Citation, SupportVerdict
from core.errors import ConfigError
from core.settings import QuestionBudget, Settings
from core.vocabulary import ROUTE_REQUESTS
from graphs.rag.run_context import RunContext

# Nodes whose model output is the answer text the user reads (the others emit JSON verdicts).
ANSWER_NODES = frozenset({"generate_answer", "regenerate_answer", "generate_direct"})


class StepUpdate(BaseModel):
    type: Literal["step"] = "step"
    step: StepEvent


class TokenDelta(BaseModel):
    type: Literal["token"] = "token"
    text: str
    node: str
    attempt: int = 1


class FinalAnswer(BaseModel):
    type: Literal["answer"] = "answer"
    answer: Answer


RunEvent = StepUpdate | TokenDelta | FinalAnswer


class TurnHost(Protocol):
    """What a turn needs from whoever runs it (``agent.Agent`` is one): settings and the compiled graph
    for a thread (checkpointed) or for a one-off question (stateless)."""

    settings: Settings

    def graph_for(self, thread_id: str | None) -> CompiledStateGraph[Any, Any, Any, Any]: ...


def turn_request(
    settings: Settings,
    question: str,
    *,
    thread_id: str | None = None,
    groups: Sequence[str] | None = None,
    route: str | None = None,
    budget: QuestionBudget | None = None,
    run_id: str | None = None,
    history: Sequence[BaseMessage] | None = None,
) -> tuple[dict[str, Any], RunnableConfig, RunContext]:
    """The graph input, run config and run context (the caller's groups, validated once) for one turn. ``budget`` replaces the limits it sets in
    ``settings.graph.budget`` for this turn (the HTTP API narrows it to the server's own first:
    ``QuestionBudget.tightened_by``). ``history`` is the conversation so far when the caller keeps it
    (OpenAI-style clients send every message each time); a thread keeps its own, so the two do not mix."""
    if history and thread_id:
        raise ConfigError("a turn continues either a thread or a caller's history, not both")
    if route is not None and route not in ROUTE_REQUESTS:
        raise ConfigError(f"route must be one of {', '.join(ROUTE_REQUESTS)}, got {route!r}")
    if groups is not None and (isinstance(groups, str) or not groups or not all(g.strip() for g in groups)):
        raise ConfigError("groups must be a non-empty list of non-empty group names")
    context = RunContext(
        user_groups=tuple(groups or settings.user_groups),
        budget=settings.graph.budget.model_copy(update=budget.model_dump(exclude_unset=True))
        if budget
        else None,
    )
    configurable: dict[str, Any] = {"thread_id": thread_id} if thread_id else {}
    config: RunnableConfig = {
        "configurable": configurable,
        "run_id": uuid.UUID(hex=run_id) if run_id else uuid.uuid4(),
        "run_name": "ragpilot",
        "recursion_limit": 100,  # never reached: every loop has its own bound in settings.graph
    }
    graph_input: dict[str, Any] = {"question": question, "route_request": route or "auto"}
    if history:
        graph_input["messages"] = list(history)
    return graph_input, config, context


def answer_from_state(
    state: dict[str, Any], *, run_id: str, total_ms: float = 0.0, thread_id: str | None = None
) -> Answer:
    """The typed ``Answer`` of a finished turn's state (full state or the graph's output)."""
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


def new_run_id() -> str:
    return uuid.uuid4().hex


_TOPOLOGIES: weakref.WeakKeyDictionary[Any, GraphTopology] = weakref.WeakKeyDictionary()


def _graph_topology(graph: Any) -> GraphTopology:
    """The graph's drawing, computed once per compiled graph (it is the same for every run)."""
    topology = _TOPOLOGIES.get(graph)
    if topology is None:
        topology = _TOPOLOGIES[graph] = GraphTopology.from_compiled_graph(graph)
    return topology


def _message_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)


def stream_answer(
    agent: TurnHost,
    question: str,
    *,
    thread_id: str | None = None,
    groups: list[str] | None = None,
    route: str | None = None,
    budget: QuestionBudget | None = None,
    run_id: str | None = None,
    sinks: Iterable[TraceSink] = (),
    store_trace: bool = True,
    tokens: bool = True,
    history: Sequence[BaseMessage] | None = None,
) -> Iterator[RunEvent]:
    """Run one turn and yield its events; the last event is always the ``FinalAnswer``.

    ``history`` is the conversation so far when the caller keeps it instead of a thread (see
    ``turn_request``).

    The run's trace is written to ``agent.settings.traces_dir/<run_id>.jsonl`` as it happens (unless
    ``store_trace`` is False) and handed to ``sinks`` (printers, span exporters). Errors raised by the
    graph propagate after being recorded as the run's error.
    """
    run_id = run_id or new_run_id()
    settings = agent.settings
    graph = agent.graph_for(thread_id)  # checkpointed for a thread, stateless otherwise
    graph_input, config, context = turn_request(
        settings, question, thread_id=thread_id, groups=groups, route=route, budget=budget, run_id=run_id,
        history=history,
    )  # fmt: skip
    modes: list[StreamMode] = ["updates", "values"]
    if tokens:
        modes.append("messages")
    started = time.perf_counter()
    with TraceRecorder(
        settings.traces_dir if store_trace else None,
        run_id=run_id,
        question=question,
        thread_id=thread_id,
        graph=_graph_topology(graph),
        sinks=sinks,
    ) as recorder:
        final_state: dict[str, Any] = {}
        attempt, current_message_id = 0, None
        chunk: Any  # (mode, chunk) pairs: the chunk's type depends on the mode
        for mode, chunk in graph.stream(graph_input, config, context=context, stream_mode=modes):
            if mode == "updates":
                for event in recorder.observe_update(chunk):
                    yield StepUpdate(step=event)
            elif mode == "values":
                final_state = chunk
            elif mode == "messages":
                message, metadata = chunk
                node = str(metadata.get("langgraph_node", ""))
                if node not in ANSWER_NODES or not isinstance(message, AIMessageChunk):
                    continue
                if message.id != current_message_id:  # a new model call: a (re)generation attempt
                    attempt, current_message_id = attempt + 1, message.id
                text = _message_text(message)
                if text:
                    yield TokenDelta(text=text, node=node, attempt=attempt)
        answer = answer_from_state(
            final_state, run_id=run_id, total_ms=(time.perf_counter() - started) * 1000.0, thread_id=thread_id
        )
        recorder.finish(answer)
    if thread_id and isinstance(graph.checkpointer, BaseCheckpointSaver):
        # Each turn saves a full snapshot per step; keep only the latest few so threads stay small.
        ThreadStore(graph.checkpointer, keep_checkpoints=settings.chat.keep_checkpoints).compact([thread_id])
    yield FinalAnswer(answer=answer)


def run_to_answer(agent: TurnHost, question: str, **options: Any) -> Answer:
    """Consume ``stream_answer`` and return the answer (the run is traced like any streamed run)."""
    answer: Answer | None = None
    for event in stream_answer(agent, question, tokens=False, **options):
        if isinstance(event, FinalAnswer):
            answer = event.answer
    assert answer is not None  # stream_answer always ends with the answer or raises
    return answer


def ask_traced(
    agent: TurnHost, question: str, *, trace: bool = False, as_json: bool = False, **options: Any
) -> Answer:
    """The CLI's ask: the run is stored like every run; with ``trace`` its steps are printed live, as a
    tree, or (with ``as_json``) as one JSON line per step. The caller prints the answer itself."""
    sinks: list[TraceSink] = []
    if trace and as_json:
        sinks.append(JsonLinesPrinter(include_answer=False))
    elif trace:
        sinks.append(LiveTreePrinter(show_answer=False))
    return run_to_answer(agent, question, sinks=sinks, **options)
