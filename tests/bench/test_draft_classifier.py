"""The fitted draft verifier's bench: features of a captured draft, the fit, the cut-off (no model involved)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.draft_classifier import Logistic, best_cut, features, outcome
from bench.verifier_set import cheap_features
from tools.knowledge_base.sparse import tokenize


def draft(
    qid: str, right: bool, *, answerable: bool = True, share: float = 0.9, judge: bool = True
) -> dict[str, Any]:
    return {
        "qid": qid, "language": "en", "answerable": answerable, "right": right, "judge_keeps": judge,
        "answers_question": judge, "code_backed": judge, "verdicts": [{"verdict": "fully" if judge else "not"}],
        "sentence_shares": [share], "not_found_probability": 0.01, "cited_rerank": 0.5, "p_yes": [0.8],
        "default_refused": not judge,
    }  # fmt: skip


def test_a_draft_without_recorded_probabilities_still_has_every_feature() -> None:
    item = draft("a", True)
    item.update(not_found_probability=None, cited_rerank=None, top_rerank=None, p_yes=[None])
    row = features(item)
    assert row["log_p_not_found"] == -4.0  # P(NOT_FOUND) not reported: as unlikely as recorded ones go
    assert row["cited_rerank"] == 0.0 and row["p_yes"] == 0.0
    assert row["best_share"] == 0.9


def test_the_fit_ranks_the_drafts_its_features_separate() -> None:
    rows = [{"share": s} for s in (0.9, 0.8, 0.85, 0.2, 0.3, 0.1)]
    model = Logistic(["share"]).fit(rows, [True, True, True, False, False, False])
    assert model.predict({"share": 0.95}) > 0.5 > model.predict({"share": 0.15})
    assert model.describe()["weights_per_sd"]["share"] > 0


def test_a_constant_feature_does_not_break_the_fit() -> None:
    model = Logistic(["x"]).fit([{"x": 1.0}] * 4, [True, False, True, True])
    assert model.predict({"x": 1.0}) == pytest.approx(0.75, abs=0.02)  # the intercept alone


def test_outcome_counts_refused_unanswerable_drafts_and_questions_without_a_draft() -> None:
    items = [
        draft("right", True),
        draft("neg", False, answerable=False),
        draft("wrong", False),  # refusing it loses nothing and gains nothing
        {"qid": "none", "answerable": False, "default_refused": True},  # no draft: the default refused
    ]
    figures = outcome(items, {"right": True, "neg": False, "wrong": False})
    assert figures["right_drafts_kept"] == [1, 1]
    assert figures["wrong_drafts_refused"] == [2, 2]
    assert figures["outcome_correct"] == 3 and figures["outcome_accuracy"] == 0.75


def test_the_cut_off_is_the_lowest_with_the_best_outcome() -> None:
    items = [draft("r1", True), draft("r2", True), draft("n1", False, answerable=False)]
    assert best_cut(items, {"r1": 0.9, "r2": 0.7, "n1": 0.4}) == 0.7
    assert best_cut(items, {"r1": 0.9, "r2": 0.7, "n1": 0.95}) == 0.0  # nothing to gain: keep every draft


def test_the_cheap_features_are_read_from_the_judged_state() -> None:
    judged = {
        "steps": [{"node": "generate_answer", "decision": {"not_found_probability": 0.02, "uncited_sentences": 0}}],
        "context": [
            {"n": 1, "chunk_id": "c1", "title": "Harbour ferry", "text": "The ferry leaves at 7:40 every weekday."},
            {"n": 2, "chunk_id": "c2", "title": "Tram", "text": "Trams run every ten minutes."},
        ],
        "hits": [{"chunk_id": "c1", "rerank_score": 0.8}, {"chunk_id": "c2", "rerank_score": 0.3}],
        "answer_draft": "The ferry leaves at 7:40. [1]",
        "support": [{"sentence": "The ferry leaves at 7:40. [1]", "citations": [1], "verdict": "fully"}],
        "proposed_short_answer": "7:40",
    }  # fmt: skip
    found = cheap_features(judged, tokenize)
    assert found["not_found_probability"] == 0.02
    assert found["cited_rerank"] == 0.8 and found["top_rerank"] == 0.8
    assert found["sentence_shares"][0] > 0.6
    assert found["backed_anywhere"] is True
