"""What the reader is shown: on the iterative route, with graph.reader_sees_reasoning, IRCoT's reasoning
sentences as notes after the passages (cases from a water utility, a choir and a Chinese bakery)."""

from __future__ import annotations

from typing import Any

import pytest

from graphs.rag.nodes.generate_answer import answer_prompt

NOTES = "Notes from the search that found these passages"


def _state(route: str, reasoning: list[str], question: str) -> dict[str, Any]:
    return {
        "standalone_question": question,
        "language": "en",
        "context": [],
        "route": route,
        "reasoning": reasoning,
    }


@pytest.mark.parametrize(
    ("question", "reasoning"),
    [
        (
            "Which river feeds the reservoir that supplies Tarnby?",
            ["Tarnby is supplied by the Holm reservoir.", "The Holm reservoir is fed by the river Esk."],
        ),
        (
            "In which year was the conductor of the Vale Choir born?",
            ["The Vale Choir is conducted by Mia Roe."],
        ),
        ("老周面包店的创始人是哪里人？", ["老周面包店由周卫国创办。"]),
    ],
)
def test_the_iterative_reader_sees_the_reasoning_as_notes_before_the_question(
    question: str, reasoning: list[str]
) -> None:
    _, user = answer_prompt(_state("iterative", reasoning, question), strict=False, reasoning=True)
    notes = user.index(NOTES)
    assert all(f"- {r}" in user[notes:] for r in reasoning)
    assert notes < user.rindex(f"Question: {question}")  # the question stays last


@pytest.mark.parametrize(
    ("route", "reasoning", "shown"),
    [
        ("iterative", ["Tarnby is supplied by the Holm reservoir."], False),  # the switch is off
        ("single", ["Tarnby is supplied by the Holm reservoir."], True),  # a stale chain of another route
        ("iterative", [], True),  # no reasoning yet
        ("iterative", ["  "], True),
        ("iterative", ["Which river feeds Tarnby?"], True),  # a step that only asks finds nothing
        ("iterative", ["老周面包店的创始人是哪里人？"], True),
    ],
)
def test_no_notes_without_the_switch_the_route_or_a_reasoning_sentence(
    route: str, reasoning: list[str], shown: bool
) -> None:
    _, user = answer_prompt(
        _state(route, reasoning, "Which river feeds Tarnby?"), strict=False, reasoning=shown
    )
    assert NOTES not in user
