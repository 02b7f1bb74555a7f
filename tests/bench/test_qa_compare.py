"""Paired comparison of two QA runs: discordant pairs and the exact McNemar test."""

from __future__ import annotations

import json
from pathlib import Path

from bench.qa_compare import compare, mcnemar_exact


def test_mcnemar_exact_matches_the_binomial_tail():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    assert round(mcnemar_exact(1, 15), 5) == 0.00052  # 2 * 17 / 2**16
    assert mcnemar_exact(2, 9) == mcnemar_exact(9, 2)


def _run(path: Path, contained: list[bool]) -> Path:
    results = [
        {"qid": f"q{i}", "contained": c, "refused": not c, "f1": 1.0 if c else 0.0, "em": float(c)}
        for i, c in enumerate(contained)
    ]
    path.write_text(json.dumps({"results": results}), encoding="utf-8")
    return path


def test_only_shared_questions_are_compared_pair_by_pair(tmp_path: Path):
    a = _run(tmp_path / "a.json", [True, True, False, False])
    b = _run(tmp_path / "b.json", [True, False, True, True, True])  # q4 is not in run a
    report = compare(a, b)
    assert report["questions"] == 4
    assert report["contained"] == {"a": 2, "b": 3, "only_a": 1, "only_b": 2, "mcnemar_p": 1.0}
    assert report["f1_mean"] == {"a": 0.5, "b": 0.75}
    assert report["f1_better"] == {"a_higher": 1, "b_higher": 2, "sign_test_p": 1.0}


def test_a_resumable_runs_partial_lines_compare_like_a_finished_run(tmp_path: Path):
    a = _run(tmp_path / "a.json", [True, False, True])
    rows = [{"qid": "q0", "contained": True, "refused": False, "f1": 0.5, "em": 0.0}]
    partial = tmp_path / "qa_b.partial.jsonl"
    partial.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report = compare(a, partial)
    assert report["questions"] == 1 and report["em_mean"] == {"a": 1.0, "b": 0.0}


def test_mixed_set_runs_are_also_paired_on_their_outcome(tmp_path: Path):
    def mixed(path: Path, outcomes: list[bool]) -> Path:
        rows = [
            {"qid": f"q{i}", "contained": False, "refused": True, "f1": 0.0, "em": 0.0, "outcome_correct": o}
            for i, o in enumerate(outcomes)
        ]  # refusals: right only where the question is unanswerable
        path.write_text(json.dumps({"results": rows}), encoding="utf-8")
        return path

    report = compare(mixed(tmp_path / "a.json", [True, False]), mixed(tmp_path / "b.json", [False, False]))
    assert report["outcome_correct"] == {"a": 1, "b": 0, "only_a": 1, "only_b": 0, "mcnemar_p": 1.0}
    plain = compare(_run(tmp_path / "c.json", [True]), _run(tmp_path / "d.json", [True]))
    assert "outcome_correct" not in plain  # QA runs of answerable sets have no outcome to pair
