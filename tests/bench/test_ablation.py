"""The ablation's paired effect: what a check wins and loses on the same questions."""

from __future__ import annotations

import pytest

from bench.ablation import agreement, effect, fired_on, with_reruns


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


def test_a_check_that_turns_wrong_answers_into_refusals_lowers_the_risk_of_what_is_answered() -> None:
    """Outcome accuracy cannot see this trade (a wrong answer and a wrong refusal both count zero); the
    risk–coverage point can: fewer answers, and fewer of them wrong."""
    with_check = {
        "a": row(True),
        "b": row(False, refused=True),
        "c": row(False, answerable=False, refused=True),
    }
    without = {"a": row(True), "b": row(False), "c": row(False, answerable=False)}
    found = effect(with_check, without)
    assert found["outcome_with_check"] == found["outcome_without"] == pytest.approx(1 / 3, abs=1e-3)
    assert (found["answered_with"], found["wrong_answers_with"]) == (1, 0)
    assert (found["answered_without"], found["wrong_answers_without"]) == (3, 2)


def test_a_check_that_changes_nothing_has_no_effect() -> None:
    same = {q: row(q in "ab") for q in "abcd"}
    found = effect(same, dict(same))
    assert found["won_by_the_check"] == found["lost_to_the_check"] == 0
    assert found["outcome_with_check"] == found["outcome_without"] == 0.5


def test_a_condition_reruns_only_the_questions_its_check_fired_on() -> None:
    base = {
        "a": {**row(True), "checks_fired": ["support"]},
        "b": {**row(False), "checks_fired": []},
        "c": {**row(False), "checks_fired": ["support", "usefulness"]},
    }
    assert fired_on(base, "support") == ["a", "c"]
    assert fired_on(base, "exclusions") == []
    rerun = {"a": row(False), "c": row(True)}
    table = with_reruns(base, rerun, ["a", "c"])
    assert table["b"] is base["b"]  # the check never fired there: the baseline's row stands
    assert (table["a"]["outcome_correct"], table["c"]["outcome_correct"]) == (False, True)


def test_a_rerun_of_other_questions_is_refused() -> None:
    base = {"a": {**row(True), "checks_fired": ["support"]}}
    with pytest.raises(SystemExit):
        with_reruns(base, {"b": row(True)}, ["a"])
    with pytest.raises(SystemExit):  # a baseline from code that did not record the checks
        fired_on({"a": row(True)}, "support")


def test_the_control_counts_reruns_that_agree_with_the_baseline() -> None:
    base = {"a": {**row(True), "answer": "x"}, "b": {**row(False), "answer": "y"}}
    again = {"a": {**row(True), "answer": "x"}, "b": {**row(True), "answer": "z"}}
    assert agreement(base, again) == {
        "questions": 2, "same_outcome": 1, "same_answer_text": 1, "differing": ["b"],
    }  # fmt: skip


def test_a_switch_reruns_the_questions_of_its_route_and_counts_what_it_wins() -> None:
    from bench.ablation import SWITCHES, affected_by

    base = {
        "a": {**row(False), "route": "iterative", "checks_fired": []},
        "b": {**row(True), "route": "single", "checks_fired": []},
    }
    assert all(  # each switch reruns the questions a check fired on, or those of a route
        selector.startswith("fired:") or selector in ("direct", "single", "iterative")
        for _, selector in SWITCHES.values()
    )
    assert affected_by(base, "iterative") == ["a"]
    assert affected_by(base, "fired:unstated_numbers") == []
    switched = with_reruns(base, {"a": row(True)}, ["a"])
    found = effect(switched, base)  # "with" is the switch on
    assert (found["won"], found["lost"]) == (["a"], [])


def test_the_report_reads_as_a_table_of_checks_and_switches() -> None:
    from bench.ablation import markdown

    base = {q: {**row(q == "a"), "checks_fired": ["support"]} for q in "ab"}
    check = {"fired_on": 2, **effect(base, with_reruns(base, {"a": row(False), "b": row(False)}, ["a", "b"]))}
    table = markdown({"checks": {"support": check}, "switches": {}})
    assert "| support (check on) | 2 | 0.500 → 0.000 | 1 / 0 |" in table
    assert "| 1/2 (0.50) → 2/2 (1.00) |" in table  # wrong answers / answered, with → without


def test_a_longer_first_extends_the_earlier_reruns_instead_of_repeating_them(tmp_path, monkeypatch) -> None:
    import json

    import bench.ablation as ablation

    monkeypatch.setattr(ablation, "RESULTS", tmp_path)

    def save(condition: str, qids: str) -> None:
        results = [{**row(True), "qid": q} for q in qids]
        (tmp_path / f"{ablation.run_name('report', 100, condition)}.json").write_text(
            json.dumps({"results": results})
        )

    save("support", "ab")
    save("support_more2", "cd")
    assert sorted(ablation.rerun_rows("report", 100, "support")) == ["a", "b", "c", "d"]
    assert ablation.rerun_rows("report", 100, "usefulness") == {}
