"""How bench.switch_pair judges an answer: gold held, a refusal of an unanswerable question, and a
comparison by the option it picks (both names are in most comparison answers)."""

from __future__ import annotations

from typing import Any

from bench.switch_pair import arms, is_right, summary

ORCHARD = {
    "question": "Which orchard is older, Hillcrest or Millbrook?",
    "gold": ["Hillcrest"],
    "other": ["Millbrook"],
}


def answer(text: str, short: str = "", refused: bool = False) -> dict[str, Any]:
    return {"answer": text, "short_answer": short, "refused": refused, "llm_calls": 3, "seconds": 1.0}


def test_a_comparison_is_judged_by_its_short_answer_when_there_is_one():
    both_named = "Hillcrest was planted in 1902 and Millbrook in 1931. [1][2]"
    assert is_right(ORCHARD, answer(both_named, short="Hillcrest"))
    assert not is_right(ORCHARD, answer(both_named, short="Millbrook"))
    assert not is_right(ORCHARD, answer(both_named, short="Hillcrest and Millbrook"))


def test_a_short_answer_naming_neither_option_leaves_the_pick_to_the_answer():
    assert is_right(ORCHARD, answer("Hillcrest is older, planted in 1902. [1]", short="1902"))
    assert not is_right(ORCHARD, answer("Millbrook is older, planted in 1899. [1]", short="1899"))


def test_without_a_short_answer_the_option_named_first_is_the_pick():
    assert is_right(ORCHARD, answer("Hillcrest is older than Millbrook. [1]"))
    assert not is_right(ORCHARD, answer("Millbrook is older than Hillcrest. [1]"))
    assert is_right(ORCHARD, answer("Hillcrest, planted in 1902. [1]"))
    assert not is_right(ORCHARD, answer("The older orchard is not stated. [1]"))


def test_a_refusal_is_wrong_unless_the_question_has_no_answer():
    refusal = answer("I could not find the answer to this in the available sources.", refused=True)
    assert not is_right(ORCHARD, refusal)
    assert is_right({"question": "Who owns the third orchard?", "answerable": False}, refusal)
    assert not is_right(
        {"question": "Who owns the third orchard?", "answerable": False}, answer("Ada Moss. [1]")
    )


def test_gold_is_held_as_a_whole_token():
    ferry = {"question": "How long is the ferry crossing?", "gold": ["5 minutes"]}
    assert is_right(ferry, answer("The crossing takes 5 minutes. [1]"))
    assert not is_right(ferry, answer("The crossing takes 15 minutes. [1]"))


def test_the_summary_counts_won_and_lost_from_the_saved_answers():
    rows = [
        {**ORCHARD, "on": answer("x", short="Hillcrest"), "off": answer("x", short="Millbrook")},
        {
            **ORCHARD,
            "question": "q2",
            "on": answer("x", short="Hillcrest"),
            "off": answer("x", short="Hillcrest"),
        },
    ]
    out = summary(rows)
    assert (out["on"]["right"], out["off"]["right"]) == (2, 1)
    assert out["won"] == [ORCHARD["question"]] and out["lost"] == []
    assert out["mcnemar_p"] == 1.0


def test_a_switch_is_paired_on_against_off_with_the_also_switches_in_both_arms():
    assert arms(["cite_bridges"], None, ["reader_sees_reasoning"]) == {
        "on": {"reader_sees_reasoning": True, "cite_bridges": True},
        "off": {"reader_sees_reasoning": True, "cite_bridges": False},
    }


def test_several_switches_are_paired_all_on_against_all_off():
    assert arms(["cite_bridges", "name_bridges"], None) == {
        "on": {"cite_bridges": True, "name_bridges": True},
        "off": {"cite_bridges": False, "name_bridges": False},
    }


def test_a_check_is_paired_run_against_switched_off():
    assert arms(None, "unlikely_draft") == {"on": {}, "off": {"checks_off": ["unlikely_draft"]}}


FERRY = {"question": "Does the Skerrow ferry run on Sundays?", "gold": ["no"], "polarity": "no"}
SCHOOL = {"question": "这所学校是公立的吗？", "gold": ["yes"], "polarity": "yes"}


def test_a_yes_no_question_is_judged_by_the_polarity_of_its_answer():
    # the short answer first, then the answer's opening word
    assert is_right(FERRY, answer("No, it runs Monday to Saturday. [1]", short="no"))
    assert is_right(FERRY, answer("No, it runs Monday to Saturday. [1]"))
    assert not is_right(FERRY, answer("Yes, the ferry runs on Sundays. [1]", short="yes"))
    # must not count: a "no" somewhere inside an answer that does not open with it, or a refusal
    assert not is_right(FERRY, answer("The ferry runs daily; there is no timetable change. [1]"))
    assert not is_right(FERRY, answer("I could not find the answer.", refused=True))
    # Chinese without a short answer: a negation anywhere says no
    assert is_right(SCHOOL, answer("是的，这所学校是公立学校。 [1]"))
    assert not is_right(SCHOOL, answer("这所学校不是公立的。 [1]"))
