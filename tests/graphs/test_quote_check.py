"""The second opinion on a rejected draft: a copied sentence, checked by code, not by the model."""

from __future__ import annotations

import pytest

from graphs.rag.nodes._quote_check import Evidence, quote_fault
from tools.knowledge_base.sparse import tokenize

# A ferry timetable and a museum notice: no benchmark's domain.
PASSAGES = {
    1: "The harbour ferry leaves every 20 minutes. The last crossing departs at 11.40 pm on weekdays.",
    2: "Tickets for the maritime museum cost 12 euros; children under six enter free.",
    3: "博物馆周一闭馆。每年五月举办航海节，持续三天。",
}


@pytest.mark.parametrize(
    ("passage", "quote", "short", "question", "fault"),
    [
        # backs the answer: verbatim (case and spacing aside), short, states it
        (
            1,
            "The last crossing departs at 11.40 pm on weekdays.",
            "11.40 pm",
            "When is the last ferry?",
            None,
        ),
        (1, "the last  crossing departs at 11.40 pm", "11.40 pm", "When is the last ferry?", None),
        (3, "每年五月举办航海节，持续三天。", "持续三天", "航海节持续多久？", None),
        # must not back it: the copy is reworded
        (1, "The final ferry leaves at 11.40 pm.", "11.40 pm", "When is the last ferry?", "word for word"),
        # must not: a sentence that does not state the answer (the neighbouring fact)
        (
            1,
            "The harbour ferry leaves every 20 minutes.",
            "11.40 pm",
            "When is the last ferry?",
            "does not state",
        ),
        # must not: copied from a passage the draft does not cite
        (
            4,
            "The last crossing departs at 11.40 pm on weekdays.",
            "11.40 pm",
            "When is the last ferry?",
            "cited",
        ),
        # must not: the whole passage copied (points at nothing)
        (2, PASSAGES[2] + " " + PASSAGES[2], "12 euros", "How much is a ticket?", "word for word"),
        # must not: a yes/no answer (no sentence states "yes")
        (2, "children under six enter free", "yes", "Do small children enter free?", "no short answer"),
        # must not: the short answer only repeats the question
        (
            2,
            "Tickets for the maritime museum cost 12 euros",
            "maritime museum",
            "How much is the maritime museum?",
            "repeats",
        ),
        # must not: an empty copy
        (0, "", "12 euros", "How much is a ticket?", "no sentence"),
    ],
)
def test_a_copy_backs_the_answer_only_when_code_finds_it_and_it_states_the_answer(
    passage: int, quote: str, short: str, question: str, fault: str | None
) -> None:
    found = quote_fault(Evidence(passage=passage, quote=quote), PASSAGES, short, question, tokenize)
    if fault is None:
        assert found is None
    else:
        assert found is not None and fault in found


def test_a_copy_of_more_than_two_sentences_points_at_nothing() -> None:
    long = {5: "One fact. Two facts. Three facts hold 7 items."}
    found = quote_fault(Evidence(passage=5, quote=long[5]), long, "7 items", "How many items?", tokenize)
    assert found is not None and "longer than" in found
