"""OpenTelemetry spans for a run (optional extra ``otel``): one root span per run, one child per step.

For users who collect traces in Phoenix, Langfuse, Jaeger...: configure an OpenTelemetry SDK tracer
provider and exporter as usual, then pass ``OtelSpanSink()`` among the sinks of ``stream_answer`` or
a ``TraceRecorder`` (see ``docs/tracing.md``). Step spans carry the node's real start and end times,
so the exported timeline matches the stored trace.
"""

from __future__ import annotations

import json
from typing import Any

from agent.tracing.events import RunStarted, RunTrace, StepEvent
from core.errors import ConfigError

TRACER_NAME = "ragpilot"
MAX_ATTRIBUTE_CHARS = 4000


def _ns(moment: Any) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def _attribute(value: Any) -> str | int | float | bool:
    """OpenTelemetry attributes are scalars: nested decisions travel as (bounded) JSON text."""
    if isinstance(value, str | int | float | bool):
        return value if not isinstance(value, str) else value[:MAX_ATTRIBUTE_CHARS]
    return json.dumps(value, ensure_ascii=False, default=str)[:MAX_ATTRIBUTE_CHARS]


class OtelSpanSink:
    """A ``TraceSink`` exporting the run as OpenTelemetry spans through ``tracer`` (default: global)."""

    def __init__(self, tracer: Any | None = None) -> None:
        try:
            from opentelemetry import trace
        except ImportError as exc:
            raise ConfigError(
                "OpenTelemetry spans need the 'otel' extra: pip install 'ragpilot[otel]'"
            ) from exc
        self._trace_api = trace
        self.tracer = tracer or trace.get_tracer(TRACER_NAME)
        self._root: Any = None

    def on_run_started(self, header: RunStarted) -> None:
        self._root = self.tracer.start_span(
            "ragpilot.run",
            start_time=_ns(header.started_at),
            attributes={
                "ragpilot.run_id": header.run_id,
                "ragpilot.thread_id": header.thread_id or "",
                "ragpilot.question": _attribute(header.question),
            },
        )

    def on_step(self, step: StepEvent) -> None:
        context = self._trace_api.set_span_in_context(self._root) if self._root is not None else None
        span = self.tracer.start_span(
            f"ragpilot.step.{step.node}",
            context=context,
            start_time=_ns(step.started_at),
            attributes={
                "ragpilot.node": step.node,
                "ragpilot.seq": step.seq,
                "ragpilot.ms": step.ms,
                **{f"ragpilot.decision.{key}": _attribute(value) for key, value in step.decision.items()},
            },
        )
        span.end(end_time=_ns(step.ended_at))

    def on_run_finished(self, trace: RunTrace) -> None:
        if self._root is None:
            return
        answer = trace.answer or {}
        for key in ("route", "crag_action", "refused", "llm_calls"):
            if answer.get(key) is not None:
                self._root.set_attribute(f"ragpilot.answer.{key}", _attribute(answer[key]))
        if trace.error:
            from opentelemetry.trace import Status, StatusCode

            self._root.set_status(Status(StatusCode.ERROR, trace.error[:MAX_ATTRIBUTE_CHARS]))
        end = trace.ended_at or (trace.steps[-1].ended_at if trace.steps else trace.started_at)
        self._root.end(end_time=_ns(end))
        self._root = None
