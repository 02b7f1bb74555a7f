"""The ablation's paired effect: what a check wins and loses on the same questions."""

from __future__ import annotations

from bench.ablation import effect


def row(correct: bool, answerable: bool = True, refused: bool = False, calls: int = 2) -> dict:
    return {"outcome_correct": correct, "answerable": answerable, "refused": refused, "llm_calls": calls}


def test_a_check_wins_what_is_right_only_with_it_and_loses_what_is_right_only_without_it() -> None:
    with_check = {
        "a": row(True),
        "b": row(False, refused=True),
        "c": row(True, answerable=False, refused=True),
    }
    without = {"a": row(False), "b": row(True), "c": row(False, answerable=False), "d": row(True)}
    found = effect(with_check, without)
    assert found["questions"] == 3  # only the questions both runs answered
    assert (found["won"], found["lost"]) == (["a", "c"], ["b"])
    assert found["answerable_refused_with"] == 1 and found["answerable_refused_without"] == 0
    assert found["unanswerable_answered_with"] == 0 and found["unanswerable_answered_without"] == 1
    assert found["mcnemar_p"] == 1.0  # 2 against 1 is no evidence either way


def test_a_check_that_changes_nothing_has_no_effect() -> None:
    same = {q: row(q in "ab") for q in "abcd"}
    found = effect(same, dict(same))
    assert found["won_by_the_check"] == found["lost_to_the_check"] == 0
    assert found["outcome_with_check"] == found["outcome_without"] == 0.5
