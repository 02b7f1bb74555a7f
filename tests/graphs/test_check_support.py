"""The short-answer check of ``check_support``: the judge's short answer must be stated in a passage the
draft cites. Cases written from other domains than the benchmarks, with those where it must not fire."""

from __future__ import annotations

import pytest

from core.answer import SupportVerdict
from graphs.rag.nodes.check_support import answer_stated_in_cited_passages

PASSAGES = [
    {"n": 1, "text": "The Millau Viaduct spans the valley of the Tarn near Millau in southern France. "
     "It opened to traffic on 16 December 2004 and its tallest mast rises 343 metres."},
    {"n": 2, "text": "Gustave Eiffel's firm built the Garabit Viaduct, finished in 1884."},
    {"n": 3, "text": "兰州中山桥建成于1909年，是黄河上第一座永久性桥梁。"},
]  # fmt: skip


def state(question: str = "When did the Millau Viaduct open?") -> dict:
    return {"standalone_question": question, "context": PASSAGES}


def citing(*numbers: int) -> list[SupportVerdict]:
    return [SupportVerdict(sentence="…", citations=list(numbers), verdict="fully")]


@pytest.mark.parametrize(
    ("short_answer", "cited", "stated"),
    [
        # must not fire: the cited passage states the answer (case, word order of a date aside)
        ("16 December 2004", (1,), True),
        ("343 metres", (1,), True),
        ("the Tarn", (1,), True),
        ("1909年", (3,), True),
        ("黄河", (3,), True),
        ("yes", (2,), True),  # a yes/no answer stands on any cited passage
        ("Gustave Eiffel's firm", (1, 2), True),  # the bridge of a two-passage answer is in the second
        # fires: what the small judge writes when the draft does not answer
        ("two years", (1,), False),  # its prompt's own example
        ("The viaduct opened to traffic in the spring after its inauguration", (1,), False),  # a sentence
        ("1884", (1,), False),  # stated, but only in a passage the draft does not cite
        ("1912年", (3,), False),
    ],
)
def test_the_short_answer_must_be_stated_in_a_passage_the_draft_cites(
    short_answer: str, cited: tuple[int, ...], stated: bool
) -> None:
    assert answer_stated_in_cited_passages(short_answer, citing(*cited), state()) is stated


def test_no_short_answer_or_no_kept_sentence_leaves_nothing_to_check() -> None:
    assert answer_stated_in_cited_passages("", citing(1), state()) is None
    rejected = [SupportVerdict(sentence="…", citations=[1], verdict="not")]
    assert answer_stated_in_cited_passages("two years", rejected, state()) is None  # refused by support


def test_only_the_passages_of_kept_sentences_count() -> None:
    verdicts = [
        SupportVerdict(sentence="…", citations=[1], verdict="fully"),
        SupportVerdict(sentence="…", citations=[2], verdict="not"),
    ]
    assert answer_stated_in_cited_passages("1884", verdicts, state()) is False
