"""``TraceRecorder``: turns the graph's update stream into step events, written as they happen.

Every node of the agent graph appends a step entry ``{"node", "started_at", "ms", "decision"}`` to the
state's ``steps`` list; with ``graph.stream(stream_mode="updates")`` each update carries the entries the
node just added. The recorder writes each one to the run's JSONL file the moment it arrives, hands it to
its sinks (live tree printer, JSON Lines printer, OpenTelemetry spans), and writes the answer last.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol

from langgraph.types import Overwrite
from pydantic import BaseModel

from agent.tracing.events import GraphTopology, RunFinished, RunStarted, RunTrace, StepEvent
from agent.tracing.store import TraceStore


class TraceSink(Protocol):
    """Something that follows a run live (a printer, a span exporter)."""

    def on_run_started(self, header: RunStarted) -> None: ...

    def on_step(self, step: StepEvent) -> None: ...

    def on_run_finished(self, trace: RunTrace) -> None: ...


def step_entries_in_update(update: Any) -> list[dict[str, Any]]:
    """The step entries carried by one ``stream_mode="updates"`` chunk ``{node: partial_state}``."""
    entries: list[dict[str, Any]] = []
    if not isinstance(update, Mapping):
        return entries
    for node_update in update.values():
        if not isinstance(node_update, Mapping):
            continue  # e.g. "__interrupt__" tuples, or a node that returned nothing
        steps = node_update.get("steps")
        if isinstance(steps, Overwrite):  # the first node of a turn resets the list
            steps = steps.value
        if isinstance(steps, Mapping):
            steps = [steps]
        if isinstance(steps, Sequence) and not isinstance(steps, str):
            entries.extend(dict(s) for s in steps if isinstance(s, Mapping) and "node" in s)
    return entries


class TraceRecorder:
    """Records one run. Use as a context manager: an exception inside is recorded as the run's error."""

    def __init__(
        self,
        traces_dir: Path | None,
        *,
        run_id: str,
        question: str,
        thread_id: str | None = None,
        graph: GraphTopology | None = None,
        sinks: Iterable[TraceSink] = (),
    ) -> None:
        """``traces_dir=None`` records in memory only (sinks still run; nothing is written)."""
        self.header = RunStarted(run_id=run_id, thread_id=thread_id, question=question, graph=graph)
        self.sinks = list(sinks)
        self.steps: list[StepEvent] = []
        self.trace: RunTrace | None = None
        self.path: Path | None = TraceStore(traces_dir).path_for(run_id) if traces_dir is not None else None
        self._file: IO[str] | None = None

    @property
    def run_id(self) -> str:
        return self.header.run_id

    def __enter__(self) -> TraceRecorder:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.trace is None:
            self.fail(f"{exc_type.__name__}: {exc}" if exc_type else "run ended without an answer")
        self._close()

    def start(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("w", encoding="utf-8")
        self._write(self.header)
        for sink in self.sinks:
            sink.on_run_started(self.header)

    def observe_update(self, update: Any) -> list[StepEvent]:
        """Record the step entries of one ``updates`` chunk; returns the events made from them."""
        return [self.record_step(entry) for entry in step_entries_in_update(update)]

    def record_step(self, entry: Mapping[str, Any]) -> StepEvent:
        event = StepEvent.from_step_entry(dict(entry), run_id=self.run_id, seq=len(self.steps) + 1)
        self.steps.append(event)
        self._write(event)
        for sink in self.sinks:
            sink.on_step(event)
        return event

    def finish(self, answer: BaseModel | Mapping[str, Any]) -> RunTrace:
        """Write the answer object as the run's last record and return the whole trace."""
        payload = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else dict(answer)
        return self._end(RunFinished(run_id=self.run_id, answer=payload))

    def fail(self, error: str) -> RunTrace:
        return self._end(RunFinished(run_id=self.run_id, error=error))

    def _end(self, record: RunFinished) -> RunTrace:
        if self.trace is not None:
            return self.trace
        self._write(record)
        self.trace = RunTrace.from_records([self.header, *self.steps, record])
        for sink in self.sinks:
            sink.on_run_finished(self.trace)
        self._close()
        return self.trace

    def _write(self, record: BaseModel) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record.model_dump(mode="json"), ensure_ascii=False) + "\n")
            self._file.flush()  # a crashed run still leaves every step it finished on disk

    def _close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
