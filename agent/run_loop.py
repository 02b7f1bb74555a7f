"""The one run loop: a turn of the agent graph as a stream of typed events, traced and compacted.

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
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessageChunk, BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import StreamMode
from pydantic import BaseModel

from agent.tracing.events import GraphTopology, StepEvent
from agent.tracing.recorder import TraceRecorder, TraceSink
from core.answer import Answer
from core.settings import QuestionBudget

if TYPE_CHECKING:
    from agent.agent import Agent

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
    agent: Agent,
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
    ``Agent.run_request``).

    The run's trace is written to ``agent.settings.traces_dir/<run_id>.jsonl`` as it happens (unless
    ``store_trace`` is False) and handed to ``sinks`` (printers, span exporters). Errors raised by the
    graph propagate after being recorded as the run's error.
    """
    run_id = run_id or new_run_id()
    settings = agent.settings
    graph = agent.graph_for(thread_id)  # checkpointed for a thread, stateless otherwise
    graph_input, config = agent.run_request(
        question, thread_id=thread_id, groups=groups, route=route, budget=budget, run_id=run_id,
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
        for mode, chunk in graph.stream(graph_input, config, stream_mode=modes):
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
        answer = agent.answer_from_state(
            final_state, run_id=run_id, total_ms=(time.perf_counter() - started) * 1000.0, thread_id=thread_id
        )
        recorder.finish(answer)
    if thread_id and isinstance(graph.checkpointer, BaseCheckpointSaver):
        # Each turn saves a full snapshot per step; keep only the latest few so threads stay small.
        from agent.threads import ThreadStore

        ThreadStore(graph.checkpointer, keep_checkpoints=settings.chat.keep_checkpoints).compact([thread_id])
    yield FinalAnswer(answer=answer)


def run_to_answer(agent: Agent, question: str, **options: Any) -> Answer:
    """Consume ``stream_answer`` and return the answer (the run is traced like any streamed run)."""
    answer: Answer | None = None
    for event in stream_answer(agent, question, tokens=False, **options):
        if isinstance(event, FinalAnswer):
            answer = event.answer
    assert answer is not None  # stream_answer always ends with the answer or raises
    return answer


def ask_traced(
    agent: Agent, question: str, *, trace: bool = False, as_json: bool = False, **options: Any
) -> Answer:
    """The CLI's ask: the run is stored like every run; with ``trace`` its steps are printed live, as a
    tree, or (with ``as_json``) as one JSON line per step. The caller prints the answer itself."""
    sinks: list[TraceSink] = []
    if trace and as_json:
        from agent.tracing.json_lines import JsonLinesPrinter

        sinks.append(JsonLinesPrinter(include_answer=False))
    elif trace:
        from agent.tracing.tree import LiveTreePrinter

        sinks.append(LiveTreePrinter(show_answer=False))
    return run_to_answer(agent, question, sinks=sinks, **options)
