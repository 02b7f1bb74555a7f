"""Run tracing: step events from the graph's update stream, a JSONL store, a tree printer, an HTML page."""

from agent.tracing.events import GraphTopology, RunFinished, RunStarted, RunTrace, StepEvent
from agent.tracing.recorder import TraceRecorder, TraceSink, step_entries_in_update
from agent.tracing.store import TraceError, TraceStore

__all__ = [
    "GraphTopology",
    "RunFinished",
    "RunStarted",
    "RunTrace",
    "StepEvent",
    "TraceError",
    "TraceRecorder",
    "TraceSink",
    "TraceStore",
    "step_entries_in_update",
]
