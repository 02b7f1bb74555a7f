"""The trace records of one run: a header, one ``StepEvent`` per graph node, and the final answer.

A run's JSONL file (``<traces_dir>/<run_id>.jsonl``) holds these records in order, one per line:
``RunStarted`` first, then ``StepEvent``s as the nodes finish, then ``RunFinished`` (the answer object,
or the error that ended the run). ``RunTrace`` is the whole run read back.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, field_validator

# Run ids name files: letters, digits, '-', '_' only, so an id can never escape the traces directory.
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9_\-]{1,128}$")


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc_datetime(value: Any) -> datetime:
    """Read a timestamp as the graph writes it: an aware/naive datetime, epoch seconds, or ISO text."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise ValueError(f"not a timestamp: {value!r}")


class GraphEdge(BaseModel):
    source: str
    target: str
    conditional: bool = False
    label: str | None = None


class GraphTopology(BaseModel):
    """The graph's nodes and edges (from ``graph.get_graph()``), stored so a replay can draw the path."""

    nodes: list[str]
    edges: list[GraphEdge]
    mermaid: str = ""

    @classmethod
    def from_compiled_graph(cls, graph: Any) -> GraphTopology:
        """Describe a compiled LangGraph graph. Never fails a run: a drawing error leaves ``mermaid`` empty."""
        drawable = graph.get_graph()
        nodes = [str(node_id) for node_id in drawable.nodes]
        edges = [
            GraphEdge(
                source=str(edge.source),
                target=str(edge.target),
                conditional=bool(edge.conditional),
                label=str(edge.data) if edge.data is not None else None,
            )
            for edge in drawable.edges
        ]
        try:
            mermaid = drawable.draw_mermaid()
        except Exception:  # drawing is a nicety; the topology above is what the page needs
            mermaid = ""
        return cls(nodes=nodes, edges=edges, mermaid=mermaid)


class RunStarted(BaseModel):
    type: Literal["run"] = "run"
    run_id: str
    thread_id: str | None = None
    question: str
    started_at: datetime = Field(default_factory=utc_now)
    graph: GraphTopology | None = None

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, run_id: str) -> str:
        if not RUN_ID_PATTERN.match(run_id):
            raise ValueError("run_id may only hold letters, digits, '-' and '_' (1-128 characters)")
        return run_id


class StepEvent(BaseModel):
    """One node's work: when it ran, how long it took, and what it decided (in the node's own words)."""

    type: Literal["step"] = "step"
    run_id: str
    seq: int = Field(ge=1, description="1-based position of this step in the run")
    node: str
    started_at: datetime
    ended_at: datetime
    ms: float = Field(ge=0)
    decision: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_step_entry(cls, entry: dict[str, Any], *, run_id: str, seq: int) -> StepEvent:
        """Build an event from a graph step entry ``{"node", "started_at", "ms", "decision"}``.

        Raises ``ValueError`` naming the missing or malformed field.
        """
        for required in ("node", "started_at", "ms"):
            if required not in entry:
                raise ValueError(f"step entry lacks '{required}': {sorted(entry)}")
        started_at = as_utc_datetime(entry["started_at"])
        ms = float(entry["ms"])
        decision = entry.get("decision") or {}
        if not isinstance(decision, dict):
            raise ValueError(f"step entry 'decision' must be a dict, got {type(decision).__name__}")
        return cls(
            run_id=run_id,
            seq=seq,
            node=str(entry["node"]),
            started_at=started_at,
            ended_at=started_at + timedelta(milliseconds=ms),
            ms=ms,
            decision=decision,
        )


class RunFinished(BaseModel):
    """The last record of a run: the answer object (``Answer.model_dump``) or the error that ended it."""

    type: Literal["answer"] = "answer"
    run_id: str
    ended_at: datetime = Field(default_factory=utc_now)
    answer: dict[str, Any] | None = None
    error: str | None = None


TraceRecord = Annotated[RunStarted | StepEvent | RunFinished, Field(discriminator="type")]
TRACE_RECORD = TypeAdapter(TraceRecord)


class RunTrace(BaseModel):
    """A whole run, as replayed from its JSONL file."""

    run_id: str
    thread_id: str | None = None
    question: str
    started_at: datetime
    ended_at: datetime | None = None
    steps: list[StepEvent] = Field(default_factory=list)
    answer: dict[str, Any] | None = None
    error: str | None = None
    graph: GraphTopology | None = None

    @property
    def finished(self) -> bool:
        return self.ended_at is not None

    @property
    def total_ms(self) -> float:
        """Wall time from the run's start to its answer (or to its last step if it never finished)."""
        end = self.ended_at or (self.steps[-1].ended_at if self.steps else self.started_at)
        return max(0.0, (end - self.started_at).total_seconds() * 1000.0)

    @property
    def path(self) -> list[str]:
        """The nodes visited, in order."""
        return [step.node for step in self.steps]

    @classmethod
    def from_records(cls, records: list[RunStarted | StepEvent | RunFinished]) -> RunTrace:
        if not records or not isinstance(records[0], RunStarted):
            raise ValueError("a trace must start with its 'run' record")
        header = records[0]
        trace = cls(
            run_id=header.run_id,
            thread_id=header.thread_id,
            question=header.question,
            started_at=header.started_at,
            graph=header.graph,
        )
        for record in records[1:]:
            if isinstance(record, StepEvent):
                trace.steps.append(record)
            elif isinstance(record, RunFinished):
                trace.ended_at, trace.answer, trace.error = record.ended_at, record.answer, record.error
        return trace
