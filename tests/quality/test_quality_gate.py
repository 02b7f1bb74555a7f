"""The quality gate (issue 22, item 6): a small golden set measured on every test run. A change to chunking,
embedding, rerank thresholds, prompts or checks that drops retrieval Recall@5 or nDCG@10 by more than 2%,
loses more than two of the mixed questions' outcomes, or lets faithfulness fall below 90% fails here.
The baseline is ``baseline.json`` beside this file; ``python -m bench.quality_gate --record`` rewrites it
(``agent/eval/quality_gate.py`` says what is measured)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.eval.mixed_set import build_mixed_set, states_answer
from agent.eval.quality_gate import (
    ANSWER_QUESTIONS,
    compare,
    gate_questions,
    measure_answers,
    measure_retrieval,
)

BASELINE = json.loads((Path(__file__).parent / "baseline.json").read_text(encoding="utf-8"))
# The measuring fixtures run inside their first test's timeout: 16 questions through the local model
# took 457 s alone on this machine and over 600 s (the suite's default) in a fresh clone on a slower day.
GATE_TIMEOUT_S = 1500


@pytest.fixture(scope="module")
def retrieval(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Any]:
    figures = measure_retrieval(shared_data, tmp_path_factory.mktemp("gate-retrieval"))
    return {name: f.model_dump() for name, f in figures.items()}


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Any]:
    return measure_answers(shared_data, tmp_path_factory.mktemp("gate-answers")).model_dump()


def _only(failures: list[str], prefix: tuple[str, ...]) -> list[str]:
    return [f for f in failures if f.startswith(prefix)]


@pytest.mark.timeout(GATE_TIMEOUT_S)
def test_retrieval_holds_recall_at_5_and_ndcg_at_10(retrieval: dict[str, Any]) -> None:
    failures = compare({"retrieval": retrieval, "answers": BASELINE["answers"]}, BASELINE)
    assert not failures, f"retrieval fell below the baseline: {failures}; measured {retrieval}"


@pytest.mark.llm
@pytest.mark.timeout(GATE_TIMEOUT_S)
def test_answers_hold_outcome_accuracy_and_faithfulness(answers: dict[str, Any]) -> None:
    failures = compare({"retrieval": BASELINE["retrieval"], "answers": answers}, BASELINE)
    lost = [
        qid
        for qid, right in BASELINE["answers"]["outcomes"].items()
        if right and not answers["outcomes"].get(qid)
    ]
    assert not failures, f"answers fell below the baseline: {failures}; questions lost: {lost}"


def test_the_gate_fails_on_a_drop_beyond_its_tolerance() -> None:
    worse = json.loads(json.dumps({"retrieval": BASELINE["retrieval"], "answers": BASELINE["answers"]}))
    name = next(iter(worse["retrieval"]))
    worse["retrieval"][name]["metrics"]["recall@5"] *= 0.97
    worse["answers"]["faithfulness"] = 0.85
    worse["answers"]["outcome_accuracy"] -= 3 / worse["answers"]["questions"]

    failures = compare(worse, BASELINE)

    assert _only(failures, (f"{name} recall@5",)) and _only(failures, ("faithfulness",))
    assert _only(failures, ("outcome accuracy",))
    assert compare({"retrieval": BASELINE["retrieval"], "answers": BASELINE["answers"]}, BASELINE) == []


def test_the_gate_asks_only_questions_of_the_calibration_split(shared_data: Path) -> None:
    """The headline is reported on the full mixed set's report split; the gate never sees one of those."""
    report = {e.qid for e in build_mixed_set(shared_data, seed=0).examples if e.split == "report"}

    asked = gate_questions(shared_data).examples

    assert len(asked) == ANSWER_QUESTIONS
    assert not {e.qid for e in asked} & report
    assert any(not e.answerable for e in asked) and any(e.language == "zh" for e in asked)


def test_the_gate_knowledge_base_holds_every_answer_it_should_and_none_it_should_not(
    shared_data: Path,
) -> None:
    """The gate indexes a few hundred passages, not the small set's thousand: each answerable question
    keeps the passages stating its answer (both hops for multi-hop), each unanswerable one stays so."""
    asked = gate_questions(shared_data)
    titles = {p.title for p in asked.passages}

    assert len(asked.passages) < 300
    for example in asked.examples:
        stated = any(states_answer(p.text, example) for p in asked.passages)
        assert stated == example.answerable, example.qid
        if example.answerable:
            assert set(example.gold_titles) <= titles, example.qid
