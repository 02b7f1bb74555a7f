"""A yes/no question's verdict read from the passages as one token (``graph.yes_no_verdict``): P(yes)
against ``graph.yes_no_threshold`` decides, and the reader is told to open with it. Cases from a
library, a ferry timetable and a Chinese school; the real model's P(yes) is measured in
``bench/results/yes_no_verdict.json``, a scripted model stands in for it here."""

from __future__ import annotations

from typing import Any

import pytest

from core.settings import load_settings
from graphs.rag.nodes._question_facts import read_question
from graphs.rag.nodes._yes_no import Verdict, passages_for, read_verdict, verdict_instruction
from graphs.rag.nodes.generate_answer import answer_prompt, generate_answer
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel, ScriptedLocalModel, prompt_of

PASSAGE = {"n": 1, "chunk_id": "f::0", "doc_id": "f", "source": "ferry.md", "title": "Ferry", "page": None,
           "url": None, "origin": "kb", "text": "The Skerrow ferry leaves at 7:10 and does not run on Sundays."}  # fmt: skip


class LocalResources(Resources):
    llm_is_local = True  # type: ignore[assignment]


def _state(question: str, context: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "question": question,
        "standalone_question": question,
        "language": "zh" if any("\u4e00" <= c <= "\u9fff" for c in question) else "en",
        "route": "single",
        "context": [PASSAGE] if context is None else context,
    }


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Does the Skerrow ferry run on Sundays?", True),
        ("Are both the reading room and the archive open late?", True),
        ("Were the east and west libraries built in the same year?", True),
        ("这所学校和那所学校都是公立的吗？", True),
        ("图书馆周日是否开放？", True),
        # must not fire: a choice, a wh-question, a statement
        ("Is the ferry faster or the bus?", False),
        ("When does the Skerrow ferry leave?", False),
        ("Which library is older, East or West?", False),
        ("学校有几个校区？", False),
        ("Thanks, that helps.", False),
    ],
)
def test_the_question_stage_reads_whether_yes_or_no_answers_it(question: str, asks: bool) -> None:
    assert read_question(question, question).asks_yes_no is asks


@pytest.mark.parametrize(("p_yes", "verdict"), [(0.95, "yes"), (0.5, "yes"), (0.45, "no"), (0.2, "no")])
def test_p_yes_below_the_threshold_is_a_no(p_yes: float, verdict: str) -> None:
    llm = ScriptedLocalModel(p_yes={"yes_no_verdict": p_yes}, replies={"yes_no_verdict": "yes"})
    resources = LocalResources(load_settings(graph={"yes_no_claims": False}), llm=llm)

    got = read_verdict(
        _state("Does the ferry run on Sundays?"), "Does the ferry run on Sundays?", resources, {}
    )

    assert (got.answer, got.p_yes, got.failed_part) == (verdict, p_yes, "")
    assert llm.prompts_called() == ["yes_no_verdict"]


def test_no_verdict_without_passages_or_without_first_token_probabilities() -> None:
    local = ScriptedLocalModel(p_yes={"yes_no_verdict": 0.9}, replies={"yes_no_verdict": "yes"})
    hosted = ScriptedChatModel(replies={"yes_no_verdict": "yes"})
    settings = load_settings(graph={"yes_no_claims": False})

    assert (
        read_verdict(
            _state("Is it open?", context=[]), "Is it open?", LocalResources(settings, llm=local), {}
        )
        == Verdict()
    )
    assert local.prompts_called() == []
    assert (
        read_verdict(_state("Is it open?"), "Is it open?", Resources(settings, llm=hosted), {}) == Verdict()
    )


def test_the_reader_is_told_the_verdict_in_the_questions_language() -> None:
    assert verdict_instruction(Verdict(answer="no"), "en").count('"No,') == 2  # the opening and the example
    assert '"是的,' in verdict_instruction(Verdict(answer="yes"), "zh")
    assert verdict_instruction(Verdict(), "en") == verdict_instruction(None, "en") == ""
    part = verdict_instruction(
        Verdict(answer="no", failed_part="Does the Finch Room have a projector?"), "en"
    )
    assert '"Does the Finch Room have a projector?"' in part

    no = Verdict(answer="no", p_yes=0.2)
    _, told = answer_prompt(_state("Does the ferry run on Sundays?"), strict=False, yes_no_verdict=no)
    _, untold = answer_prompt(_state("Does the ferry run on Sundays?"), strict=False)
    assert "the answer is no" in told and "answer is no" not in untold


@pytest.mark.parametrize(
    ("switch", "question", "calls"),
    [
        (True, "Does the ferry run on Sundays?", ["yes_no_verdict", "generate_answer"]),
        (False, "Does the ferry run on Sundays?", ["generate_answer"]),  # the switch is off
        (True, "When does the ferry leave?", ["generate_answer"]),  # not a yes/no question
    ],
)
def test_the_reader_writes_the_verdict_only_for_yes_no_questions_with_the_switch(
    switch: bool, question: str, calls: list[str]
) -> None:
    llm = ScriptedLocalModel(
        p_yes={"yes_no_verdict": 0.3},
        replies={"yes_no_verdict": "no", "generate_answer": "No, the ferry does not run on Sundays. [1]"},
    )
    resources = LocalResources(
        load_settings(graph={"yes_no_verdict": switch, "yes_no_claims": False}), llm=llm
    )

    update = generate_answer(_state(question), {}, resources=resources)

    assert llm.prompts_called() == calls
    told = "the answer is no" in llm.calls[-1][1][-1].text
    assert told is (len(calls) == 2)
    assert update["yes_no_verdict"] == (
        {"answer": "no", "p_yes": 0.3, "failed_part": "", "found": []} if told else {}
    )
    assert update["steps"][-1]["decision"].get("p_yes") == (0.3 if told else None)


def _passages(*texts: str) -> list[dict[str, Any]]:
    return [{**PASSAGE, "n": i, "chunk_id": f"p::{i}", "text": t} for i, t in enumerate(texts, start=1)]


ROOMS = _passages(
    "The Lark Room seats forty and has a projector.",
    "The Finch Room seats twelve; it has no projector, only a whiteboard.",
    "Both rooms are booked through the front desk.",
)


def test_a_claim_about_one_thing_is_read_against_that_things_passage_alone() -> None:
    # beside the Lark Room's projector the model says the Finch Room has one too
    assert [p["n"] for p in passages_for("Does the Finch Room have a projector?", ROOMS, one=True)] == [2]
    assert [p["n"] for p in passages_for("Does the Lark Room have a projector?", ROOMS, one=True)] == [1]


def test_an_unsplit_question_also_gets_a_second_passage_that_scores_close() -> None:
    chosen = passages_for("Do the Lark Room and the Finch Room seat the same number?", ROOMS, one=False)
    assert [p["n"] for p in chosen] == [1, 2]
    # must not add a passage that shares nothing with the question
    water = _passages("The Skerrow ferry leaves at 7:10.", "Tickets are sold on board.")
    assert [p["n"] for p in passages_for("When does the Skerrow ferry leave?", water, one=False)] == [1]
    assert passages_for("Is it open?", ROOMS[:1], one=True) == ROOMS[:1]


def test_the_paragraph_is_read_from_the_passage_as_retrieved_not_the_kept_sentences() -> None:
    retrieved = (
        "The Mossgate Punch mixes dark rum and pineapple juice. It is served warm in winter.\n\n"
        "The Blue Fennick is made with gin and soda water. It is served over ice."
    )
    # refinement kept the sentences that name the drinks and dropped the one that says how it is served
    kept = [{**PASSAGE, "chunk_id": "drinks::0", "text": "The Mossgate Punch mixes dark rum and pineapple juice. "
             "… The Blue Fennick is made with gin and soda water."}]  # fmt: skip

    chosen = passages_for("Is the Mossgate Punch served warm?", kept, True, {"drinks::0": retrieved})

    assert (
        chosen[0]["text"]
        == "The Mossgate Punch mixes dark rum and pineapple juice. It is served warm in winter."
    )
    assert passages_for("Is the Mossgate Punch served warm?", kept, True)[0]["text"] == kept[0]["text"]


@pytest.mark.parametrize(
    ("claims", "p_yes", "verdict"),
    [
        ('{"questions": ["Does the Lark Room have a projector?", "Does the Finch Room have a projector?"]}',
         [0.95, 0.2], Verdict(answer="no", p_yes=0.2, failed_part="Does the Finch Room have a projector?")),
        ('{"questions": ["Does the Lark Room have a projector?"]}', [0.95], Verdict(answer="yes", p_yes=0.95)),
        ("not json", [0.95], Verdict(answer="yes", p_yes=0.95)),  # an unusable split: the question as it is
    ],
)  # fmt: skip
def test_with_claims_the_verdict_is_the_least_p_yes_of_the_parts(
    claims: str, p_yes: list[float], verdict: Verdict
) -> None:
    scores = iter(p_yes)

    class PerClaim(ScriptedLocalModel):
        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            if prompt_of(messages) == "yes_no_verdict":
                self.p_yes["yes_no_verdict"] = next(scores)
            return super()._generate(messages, stop, run_manager, **kwargs)

    llm = PerClaim(p_yes={"yes_no_verdict": 0.0}, replies={"yes_no_claims": claims, "yes_no_verdict": "yes"})
    resources = LocalResources(load_settings(), llm=llm)  # both switches are on by default
    question = "Do both the Lark Room and the Finch Room have a projector?"

    assert read_verdict(_state(question, ROOMS), question, resources, {}) == verdict
    assert llm.prompts_called().count("yes_no_verdict") == len(p_yes)


def test_a_hosted_model_answers_yes_no_questions_itself() -> None:
    # the threshold and the split are calibrated on the bundled 1.5B model's yes-bias
    llm = ScriptedChatModel(replies={"generate_answer": "No, the ferry does not run on Sundays. [1]"})

    update = generate_answer(
        _state("Does the ferry run on Sundays?"), {}, resources=Resources(load_settings(), llm=llm)
    )

    assert llm.prompts_called() == ["generate_answer"] and update["yes_no_verdict"] == {}


TOWNS = _passages(
    "Ada Brook was born in 1950 in Harlow. She ran the town's ferry for thirty years.",
    "Ben Cole was born in 1961 in Harlow and later moved to the coast.",
)


@pytest.mark.parametrize(
    ("lookups", "values", "p_yes", "verdict"),
    [
        # the two values looked up, then compared in one token
        ('{"questions": ["Where was Ada Brook born?", "Where was Ben Cole born?"]}', ["Harlow", "Harlow"],
         0.9, Verdict(answer="yes", p_yes=0.9, found=["Where was Ada Brook born? Harlow",
                                                      "Where was Ben Cole born? Harlow"])),
        # a value not found: the question is read as one token over its paragraphs instead
        ('{"questions": ["Where was Ada Brook born?", "Where was Ben Cole born?"]}', ["Harlow", "NOT_FOUND"],
         0.2, Verdict(answer="no", p_yes=0.2)),
        # not a comparison of two things
        ('{"questions": []}', [], 0.2, Verdict(answer="no", p_yes=0.2)),
    ],
)  # fmt: skip
def test_with_lookups_a_comparison_is_decided_from_the_two_values(
    lookups: str, values: list[str], p_yes: float, verdict: Verdict
) -> None:
    answers = iter(values)
    llm = ScriptedLocalModel(
        p_yes={"yes_no_from_values": p_yes, "yes_no_verdict": p_yes},
        replies={
            "yes_no_claims": '{"questions": ["Were Ada Brook and Ben Cole born in the same town?"]}',
            "yes_no_lookups": lookups,
            "lookup_value": lambda messages: next(answers),
            "yes_no_from_values": "yes",
            "yes_no_verdict": "no",
        },
    )
    resources = LocalResources(load_settings(graph={"yes_no_lookups": True}), llm=llm)
    question = "Were Ada Brook and Ben Cole born in the same town?"

    assert read_verdict(_state(question, TOWNS), question, resources, {}) == verdict
    # each value is looked up in its own paragraph
    looked_up = [m[-1].text for name, m in llm.calls if name == "lookup_value"]
    assert all(text.count("<passage ") == 1 for text in looked_up)
