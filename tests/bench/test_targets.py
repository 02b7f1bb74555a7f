"""The target table reads what the runs saved: a run under way from its partial file (and says how far
it got), a finished run from its JSON, and a run never made as not run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bench.targets as targets


def qa_row(f1: float, refused: bool = False, ms: float = 5000.0, calls: int = 2) -> dict[str, object]:
    return {"f1": f1, "contained": f1 > 0.5, "refused": refused, "llm_calls": calls, "total_ms": ms}


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(targets, "RESULTS", tmp_path)
    monkeypatch.setattr(targets, "PARTIALS", tmp_path)  # runs under way keep their partial files apart
    return tmp_path


def by_run(rows: list[dict[str, object]], label_start: str) -> dict[str, object]:
    return next(r for r in rows if str(r["target"]).startswith(label_start))


def test_a_finished_run_is_met_or_missed_and_a_run_under_way_is_partial(results: Path) -> None:
    finished = [qa_row(1.0)] * 150 + [qa_row(0.0)] * 50  # F1 0.75 over all 200
    (results / "qa_squad.json").write_text(json.dumps({"results": finished}))
    (results / "qa_rgb_negative.partial.jsonl").write_text(
        "\n".join(json.dumps(qa_row(0.0, refused=i < 7)) for i in range(10)) + "\n"
    )
    rows = targets.table(None)
    squad = by_run(rows, "SQuAD dev 200 (seed 0): F1")
    assert (squad["value"], squad["questions"], squad["status"]) == (0.75, 200, "met")
    refusals = by_run(rows, "SQuAD dev 200 (seed 0): refused")  # a ceiling: none refused meets it
    assert (refusals["value"], refusals["status"]) == (0.0, "met")
    negatives = by_run(rows, "RGB zh_refine first 100, negatives")
    assert (negatives["value"], negatives["questions"], negatives["status"]) == (0.7, 10, "partial")
    assert by_run(rows, "CMRC")["source"] is None
    assert "| not run |" in targets.markdown(rows)


def test_the_partial_file_of_a_new_run_is_read_before_the_old_finished_one(results: Path) -> None:
    (results / "qa_squad.json").write_text(json.dumps({"results": [qa_row(0.0)] * 200}))
    (results / "qa_squad.partial.jsonl").write_text(json.dumps(qa_row(1.0)) + "\n")
    assert by_run(targets.table(None), "SQuAD")["source"] == "qa_squad.partial.jsonl"


def test_latency_is_a_ceiling_read_from_an_idle_single_route_run(results: Path) -> None:
    rows = [qa_row(1.0, ms=ms, calls=calls) for ms, calls in ((4000, 2), (5000, 2), (9000, 4))]
    (results / "idle.json").write_text(json.dumps({"results": rows}))
    table = targets.table("idle.json")
    latency = by_run(table, "single-route latency")
    calls = by_run(table, "single-route LLM calls")
    assert (latency["value"], latency["status"]) == (5.0, "met")
    assert (round(calls["value"], 2), calls["status"]) == (2.67, "missed")
