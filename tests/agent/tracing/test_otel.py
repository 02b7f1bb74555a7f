"""OpenTelemetry spans, collected by the SDK's in-memory exporter."""

from __future__ import annotations

import pytest
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent.tracing.otel import OtelSpanSink
from tests.agent.tracing.conftest import record_tiny_run


@pytest.fixture
def exporter_and_tracer():
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider.get_tracer("test")


def test_each_step_is_a_child_span_of_the_run_with_its_real_timing(exporter_and_tracer) -> None:
    exporter, tracer = exporter_and_tracer
    trace = record_tiny_run(None, "Unknown zebra", sinks=[OtelSpanSink(tracer)])
    spans = exporter.get_finished_spans()
    root = next(s for s in spans if s.name == "ragpilot.run")
    steps = sorted((s for s in spans if s.name.startswith("ragpilot.step.")), key=lambda s: s.start_time)
    assert [s.attributes["ragpilot.node"] for s in steps] == trace.path
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in steps)
    retrieve = next(s for s in steps if s.attributes["ragpilot.node"] == "retrieve")
    assert (retrieve.end_time - retrieve.start_time) / 1e6 == pytest.approx(trace.steps[1].ms, abs=0.01)
    assert root.attributes["ragpilot.run_id"] == "run-1"


def test_nested_decisions_travel_as_json_attributes(exporter_and_tracer) -> None:
    exporter, tracer = exporter_and_tracer
    record_tiny_run(None, "Unknown zebra", sinks=[OtelSpanSink(tracer)])
    grade = next(s for s in exporter.get_finished_spans() if s.name == "ragpilot.step.grade")
    assert grade.attributes["ragpilot.decision.retry"] == '{"counter": 1, "bound": 1}'
    assert grade.attributes["ragpilot.decision.crag_action"] == "retry"
