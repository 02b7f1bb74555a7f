"""A saved run rescored under the short-answer rules that need only the question: what they drop is
scored on the whole answer instead, and nothing else changes."""

from __future__ import annotations

from bench.rescore_short_answers import rescore


def result(question: str, short: str, answer: str, f1: float, gold: str) -> dict[str, object]:
    return {"question": question, "short_answer": short, "answer": answer, "f1": f1, "em": float(f1 == 1.0),
            "gold": [[gold]], "language": "en", "refused": False}  # fmt: skip


def test_a_yes_to_a_what_question_is_dropped_and_scored_on_the_whole_answer() -> None:
    tancred = result("What major conquest did Tancred play a roll in?", "yes",
                     "Tancred took part in the conquest of Jerusalem [1].", 0.0, "Jerusalem")  # fmt: skip
    kept = result("Is Oslo in Norway?", "yes", "Yes, Oslo is in Norway [1].", 1.0, "yes")
    report = rescore([tancred, kept])
    assert [d["question"] for d in report["short_answers_dropped"]] == [tancred["question"]]
    assert report["f1"]["saved"] == 0.5 and report["f1"]["now"] > 0.5
    assert report["em"]["now"] == report["em"]["saved"] == 0.5
