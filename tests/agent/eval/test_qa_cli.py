"""``ragpilot eval qa --limit 2`` end to end on the real benchmark files, with the offline models.

One run per format (the LLM makes these slow: a few seconds per question). They check the path, not
the model's quality: the report is complete, every question ran, and retrieval found its passages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app

pytestmark = [pytest.mark.llm, pytest.mark.slow]


def _run_eval(home: Path, *args: str) -> dict:
    result = CliRunner().invoke(
        app, ["eval", "qa", *args, "--limit", "2", "--home", str(home), "--json", "--per-question"]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def _check_complete(report: dict) -> None:
    assert report["questions"] == 2 and report["errors"] == 0
    for name in ("em", "f1", "f1_best_sentence", "contained", "refusal_rate"):
        assert 0.0 <= report["metrics"][name] <= 1.0
    assert sum(stats["questions"] for stats in report["routes"].values()) == 2
    for result in report["results"]:
        assert result["answer"].strip()
        assert result["total_ms"] > 0
        assert result["llm_calls"] >= 1 or result["refused"]  # a refusal may come before any LLM call


def test_hotpot_single_route_retrieves_the_supporting_titles(tmp_path: Path, shared_data: Path):
    path = shared_data / "hotpotqa" / "hotpot_dev_distractor_first100.json"
    report = _run_eval(tmp_path, "--dataset", str(path), "--format", "hotpot", "--route", "single")
    _check_complete(report)
    assert report["index_documents"] == 20  # 2 questions x 10 paragraphs, distinct titles
    assert set(report["routes"]) == {"single"}
    # Over 20 paragraphs, hybrid search must surface at least one gold title per question.
    assert all(r["supporting_recall"] > 0 for r in report["results"])
    assert "supporting_recall@10" in report["metrics"]


def test_squad_sample_runs_on_its_articles(tmp_path: Path, shared_data: Path):
    report = _run_eval(
        tmp_path, "--dataset", str(shared_data / "cmrc2018" / "cmrc2018_trial.json"), "--format", "squad"
    )
    _check_complete(report)
    assert all(r["language"] == "zh" for r in report["results"])


def test_rgb_negative_only_reports_a_rejection_rate(tmp_path: Path, shared_data: Path):
    path = shared_data / "rgb" / "zh_refine.json"
    report = _run_eval(
        tmp_path, "--dataset", str(path), "--format", "rgb", "--negative-only", "--route", "single"
    )
    _check_complete(report)
    assert report["negative_only"] is True
    assert report["metrics"]["rejection_rate"] == report["metrics"]["refusal_rate"]
