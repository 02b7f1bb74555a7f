"""TraceRecorder and TraceStore: one JSONL file per run, header first, steps as they happen, answer last."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.tracing import RunTrace, StepEvent, TraceError, TraceRecorder, TraceStore
from agent.tracing.recorder import step_entries_in_update
from tests.agent.tracing.conftest import record_tiny_run


def test_run_file_holds_header_then_steps_then_answer(tmp_path: Path, falcon_trace: RunTrace) -> None:
    lines = (tmp_path / "traces" / "run-1.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records] == ["run", "step", "step", "step", "step", "answer"]
    assert [r["node"] for r in records[1:-1]] == ["start_turn", "retrieve", "grade", "generate"]
    assert records[0]["question"] == "What is the Falcon latency?"
    assert "40 ms" in records[-1]["answer"]["answer"]


def test_stored_run_replays_identically(tmp_path: Path, falcon_trace: RunTrace) -> None:
    replayed = TraceStore(tmp_path / "traces").load("run-1")
    assert replayed == falcon_trace
    assert replayed.path == ["start_turn", "retrieve", "grade", "generate"]
    assert replayed.thread_id == "thread-a"
    assert replayed.graph is not None and "grade" in replayed.graph.nodes


def test_steps_are_on_disk_before_the_run_ends(tmp_path: Path) -> None:
    seen_on_disk: list[int] = []

    class CountLinesOnDisk:
        def on_run_started(self, header) -> None: ...

        def on_step(self, step: StepEvent) -> None:
            path = tmp_path / "traces" / "run-live.jsonl"
            seen_on_disk.append(len(path.read_text(encoding="utf-8").splitlines()))

        def on_run_finished(self, trace) -> None: ...

    record_tiny_run(tmp_path / "traces", "Falcon?", run_id="run-live", sinks=[CountLinesOnDisk()])
    assert seen_on_disk == [2, 3, 4, 5]  # header + each step written (and flushed) as it arrived


def test_step_timing_comes_from_the_node_entry(falcon_trace: RunTrace) -> None:
    retrieve = falcon_trace.steps[1]
    assert retrieve.node == "retrieve" and retrieve.seq == 2
    assert retrieve.ms >= 10  # the node sleeps 10 ms
    assert abs((retrieve.ended_at - retrieve.started_at).total_seconds() * 1000 - retrieve.ms) < 0.01
    assert falcon_trace.total_ms >= retrieve.ms


def test_loop_retries_appear_as_repeated_steps_with_counter(retry_trace: RunTrace) -> None:
    assert retry_trace.path == ["start_turn", "retrieve", "grade", "retrieve", "grade", "generate"]
    grades = [s.decision for s in retry_trace.steps if s.node == "grade"]
    assert [g["retry"] for g in grades] == [{"counter": 1, "bound": 1}, {"counter": 1, "bound": 1}]
    assert [g["crag_action"] for g in grades] == ["retry", "give_up"]


def test_an_exception_during_the_run_is_recorded_as_its_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), TraceRecorder(tmp_path, run_id="boom", question="q") as recorder:
        recorder.record_step(
            {"node": "route", "started_at": "2026-01-01T00:00:00+00:00", "ms": 3, "decision": {}}
        )
        raise RuntimeError("model crashed")
    trace = TraceStore(tmp_path).load("boom")
    assert trace.path == ["route"]
    assert trace.answer is None and trace.error == "RuntimeError: model crashed"


def test_a_truncated_last_line_is_ignored_on_replay(tmp_path: Path, falcon_trace: RunTrace) -> None:
    path = tmp_path / "traces" / "run-1.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20], encoding="utf-8")
    trace = TraceStore(tmp_path / "traces").load("run-1")
    assert trace.path == ["start_turn", "retrieve"] and not trace.finished


def test_a_corrupt_middle_line_names_the_file_and_line(tmp_path: Path, falcon_trace: RunTrace) -> None:
    path = tmp_path / "traces" / "run-1.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = "{not json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(TraceError, match=r"run-1\.jsonl: line 3"):
        TraceStore(tmp_path / "traces").load("run-1")


def test_unknown_run_id_is_a_trace_error_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no stored run 'nope'"):
        TraceStore(tmp_path).load("nope")


@pytest.mark.parametrize("bad_id", ["../etc/passwd", "a/b", "", "x" * 129])
def test_run_ids_cannot_leave_the_traces_directory(tmp_path: Path, bad_id: str) -> None:
    with pytest.raises(TraceError, match="not valid"):
        TraceStore(tmp_path).path_for(bad_id)


def test_malformed_step_entry_names_the_missing_field(tmp_path: Path) -> None:
    recorder = TraceRecorder(None, run_id="r", question="q")
    recorder.start()
    with pytest.raises(ValueError, match="lacks 'ms'"):
        recorder.record_step({"node": "x", "started_at": "2026-01-01T00:00:00Z"})


def test_update_chunks_without_steps_yield_no_entries() -> None:
    assert step_entries_in_update({"__interrupt__": ("x",)}) == []
    assert step_entries_in_update({"node": None}) == []
    entry = {"node": "a", "started_at": 0, "ms": 1, "decision": {}}
    assert step_entries_in_update({"a": {"steps": [entry]}, "b": {"answer": "x"}}) == [entry]


def test_newest_runs_are_listed_first(tmp_path: Path) -> None:
    import os

    for index, run_id in enumerate(["older", "newer"]):
        record_tiny_run(tmp_path, "Falcon?", run_id=run_id)
        os.utime(tmp_path / f"{run_id}.jsonl", (1_000_000 + index, 1_000_000 + index))
    assert TraceStore(tmp_path).list_run_ids() == ["newer", "older"]
