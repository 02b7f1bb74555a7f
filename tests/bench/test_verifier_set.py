"""The verifier comparison: how each verifier's keep/refuse decisions are counted (no model involved)."""

from __future__ import annotations

from typing import Any

from bench.verifier_set import calibrate, default_outcome, table


def item(
    right: bool, *, answerable: bool = True, judge: bool, p: float, copy: bool = False
) -> dict[str, Any]:
    return {
        "answerable": answerable,
        "right": right,
        "judge_keeps": judge,
        "p_yes": [p, None],
        "copy_fault": None if copy else "the copy is not in the passage word for word",
        "code_backed": False,
        "short_answer": "",
        "default_refused": not judge,
    }


def test_each_verifier_is_counted_on_right_drafts_kept_and_wrong_drafts_refused() -> None:
    items = [
        item(True, judge=True, p=0.9),
        item(True, judge=False, p=0.8, copy=True),  # a right draft the judge threw away
        item(False, answerable=False, judge=True, p=0.2),  # an answer to an unanswerable question
        {"answerable": False, "default_refused": True},  # no draft at all: the default refused, rightly
    ]
    figures = table(items, cut=0.5)
    assert figures["judge"] == {
        "right_drafts_kept": "1/2",
        "wrong_drafts_refused": "0/1",
        "outcome_accuracy": 0.5,
    }
    assert figures["accept_all"]["outcome_accuracy"] == 0.75
    assert figures["p_yes"] == {
        "right_drafts_kept": "2/2",
        "wrong_drafts_refused": "1/1",
        "outcome_accuracy": 1.0,
    }
    assert figures["judge_or_copy"]["right_drafts_kept"] == "2/2"


def test_the_cut_off_is_the_one_that_sorts_the_calibration_drafts_best() -> None:
    items = [item(True, judge=True, p=0.9), item(True, judge=True, p=0.7), item(False, judge=True, p=0.4)]
    assert 0.4 < calibrate(items) <= 0.7
    assert calibrate([item(False, judge=True, p=0.9)]) > 0.9  # only wrong drafts: refuse them all


def test_the_captured_default_is_scored_as_the_mixed_set_scores_a_run() -> None:
    base = {"language": "en", "gold": [["Tarn"]], "default_answer": "It spans the Tarn. [1]"}
    assert default_outcome({**base, "answerable": True, "default_refused": False})
    assert not default_outcome({**base, "answerable": True, "default_refused": True})
    assert default_outcome({**base, "answerable": False, "default_refused": True})
    assert not default_outcome({**base, "answerable": False, "default_refused": False})


def test_a_verifier_is_compared_only_on_splits_where_every_draft_was_asked_it() -> None:
    old = item(True, judge=True, p=0.9, copy=True)
    new = {key: value for key, value in item(False, judge=True, p=0.2).items() if key != "copy_fault"}
    assert "judge_or_copy" in table([old], cut=0.5)
    figures = table([old, new], cut=0.5)  # the copy was not asked after session 18
    assert "copy" not in figures and "judge_or_copy" not in figures
    assert figures["judge"]["right_drafts_kept"] == "1/1"
