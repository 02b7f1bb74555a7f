"""Faithfulness without a model: a shown sentence counts when the passages it cites hold its numbers and
most of its words. The cases are written from domains no benchmark covers (a bakery, a railway, a
library, a clinic), with the ones where grounding must *not* be found."""

from __future__ import annotations

import pytest

from agent.eval.faithfulness import ShownSentence, is_grounded, measure_grounding

BAKERY = "The Lindqvist bakery opens at 6 a.m. and sells rye bread baked in a wood-fired oven since 1952."
RAILWAY = "The coastal line from Porto to Viana runs 82 kilometres and was electrified in 2004."
LIBRARY = "读者每次最多可借阅十二本图书，借期为三十天，可续借一次。"
CLINIC = "Der Zugang ist barrierefrei."  # no English words in common with any sentence below


@pytest.mark.parametrize(
    ("sentence", "cited"),
    [
        ("The Lindqvist bakery opens at 6 a.m.", [BAKERY]),
        ("It has baked rye bread in a wood-fired oven since 1952.", [BAKERY]),
        ("The coastal line from Porto to Viana is 82 kilometres long.", [RAILWAY]),
        ("读者最多可借阅12本图书。", [LIBRARY]),  # digits for the passage's Chinese numeral
        ("讀者每次最多可借閱十二本圖書。", [LIBRARY]),  # Traditional script against a Simplified passage
        # A bridge answer: each half stated by a different cited passage.
        ("The bakery opened in 1952 and the coastal line was electrified in 2004.", [BAKERY, RAILWAY]),
    ],
)
def test_a_sentence_its_sources_state_is_grounded(sentence: str, cited: list[str]) -> None:
    assert is_grounded(sentence, cited)


@pytest.mark.parametrize(
    ("sentence", "cited"),
    [
        ("The Lindqvist bakery opens at 7 a.m.", [BAKERY]),  # a number the source does not state
        ("The coastal line was electrified in 2014.", [RAILWAY]),
        ("读者最多可借阅二十本图书。", [LIBRARY]),
        ("The Lindqvist bakery opens at 6 a.m.", [RAILWAY]),  # cites the wrong passage
        ("The Lindqvist bakery opens at 6 a.m.", []),  # cites nothing
        # Written from elsewhere on the same topic: few of its words are in the passage.
        ("Bakers there are paid above the regional union wage and own shares.", [BAKERY]),
        ("The access is free of barriers for wheelchair users.", [CLINIC]),
    ],
)
def test_a_sentence_its_sources_do_not_state_is_not_grounded(sentence: str, cited: list[str]) -> None:
    assert not is_grounded(sentence, cited)


def test_grounding_is_not_correctness() -> None:
    # Asked about sick leave, answered with annual leave: grounded (the outcome judges the rest).
    handbook = "Every employee gets 25 days of paid annual leave and 12 days of paid sick leave."
    assert is_grounded("Every employee gets 25 days of paid annual leave.", [handbook])


def test_the_share_counts_every_shown_sentence_of_every_answer() -> None:
    texts = {"bakery": ("Lindqvist", BAKERY), "railway": ("Coastal line", RAILWAY)}
    answers = [
        [ShownSentence(sentence="The Lindqvist bakery opens at 6 a.m.", doc_ids=["bakery"])],
        [
            ShownSentence(sentence="The coastal line is 82 kilometres long.", doc_ids=["railway"]),
            ShownSentence(sentence="It was electrified in 1999.", doc_ids=["railway"]),
            ShownSentence(sentence="The line is 82 kilometres long.", doc_ids=["unknown"]),
        ],
        [],  # a refusal shows nothing
    ]
    measured = measure_grounding(answers, texts)
    assert (measured.sentences, measured.grounded, measured.share) == (4, 2, 0.5)
    assert measured.ungrounded == ["It was electrified in 1999.", "The line is 82 kilometres long."]


def test_no_sentence_shown_is_a_full_share() -> None:
    assert measure_grounding([[], []], {}).share == 1.0
