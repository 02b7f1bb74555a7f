"""Fixtures: a real run of the tiny graph, recorded to a real JSONL file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.tracing import GraphTopology, RunTrace, TraceRecorder, TraceSink
from tests.agent.tiny_rag_graph import build_tiny_graph


def record_tiny_run(
    traces_dir: Path | None, question: str, run_id: str = "run-1", sinks: list[TraceSink] | None = None
) -> RunTrace:
    """Run the tiny graph on ``question`` through a TraceRecorder and return the finished trace."""
    graph = build_tiny_graph()
    with TraceRecorder(
        traces_dir,
        run_id=run_id,
        question=question,
        thread_id="thread-a",
        graph=GraphTopology.from_compiled_graph(graph),
        sinks=sinks or [],
    ) as recorder:
        final: dict[str, Any] = {}
        for mode, chunk in graph.stream({"question": question}, stream_mode=["updates", "values"]):
            if mode == "updates":
                recorder.observe_update(chunk)
            else:
                final = chunk
        citations = [
            {"n": n, "chunk_id": h["chunk_id"], "doc_id": h["chunk_id"], "title": h["title"]}
            for n, h in enumerate(final["hits"], start=1)
        ]
        return recorder.finish({"answer": final["answer"], "citations": citations, "run_id": run_id})


@pytest.fixture
def falcon_trace(tmp_path: Path) -> RunTrace:
    return record_tiny_run(tmp_path / "traces", "What is the Falcon latency?")


@pytest.fixture
def retry_trace(tmp_path: Path) -> RunTrace:
    """A run that finds nothing, retries once (its bound) and gives up."""
    return record_tiny_run(tmp_path / "traces", "Unknown zebra", run_id="run-retry")
