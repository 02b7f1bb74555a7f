"""Names a question writes in pinyin that the passages write in characters, and the reverse.

Cases from a ferry timetable, a hospital and a tea shop (not the benchmark's documents), with the cases
where nothing may be matched."""

from __future__ import annotations

import pytest

from tools.pinyin_names import capitalised_names, names_in_passage_script, with_passage_spellings

FERRY = ["清河渡口的渡船每天早上七点发船，到对岸的石门镇需要二十分钟。", "票价为每人五元。"]
HOSPITAL = [
    "Dr. Zhang Wei heads the cardiology ward of the Riverside Hospital.",
    "Visiting hours end at 20:00.",
]


@pytest.mark.parametrize(
    ("question", "passages", "names"),
    [
        ("When does the first ferry leave Qinghe?", FERRY, {"Qinghe": "清河"}),
        ("How long is the crossing to Shimen?", FERRY, {"Shimen": "石门"}),
        (
            "张伟负责哪个科室？",
            HOSPITAL,
            {"张伟": "Zhang Wei"},
        ),  # characters in the question, pinyin in the passage
        ("Does Xi'an Tea sell green tea?", ["西安茶庄只卖红茶。"], {"Xi'an": "西安"}),  # apostrophe dropped
    ],
)
def test_a_name_is_written_as_the_passages_write_it(question, passages, names) -> None:
    assert names_in_passage_script(question, passages) == names


@pytest.mark.parametrize(
    ("question", "passages"),
    [
        ("How long does the ferry take?", FERRY),  # "How", "long": not capitalised names of the passages
        ("When does the ferry leave Dover?", FERRY),  # a name the passages do not hold
        ("Who heads the cardiology ward?", HOSPITAL),  # an English question over English passages
        ("渡船几点发船？", FERRY),  # a Chinese question over Chinese passages
        ("Is the Ma ferry cheaper?", ["马渡口票价四元。"]),  # one syllable reads as too many characters
    ],
)
def test_nothing_is_matched_where_the_question_names_nothing_the_passages_spell_otherwise(
    question, passages
) -> None:
    assert names_in_passage_script(question, passages) == {}


def test_a_two_word_name_wins_over_its_parts() -> None:
    passages = ["王芳是石门镇的镇长。", "王先生在渡口工作。"]
    assert names_in_passage_script("Where does Wang Fang work?", passages) == {"Wang Fang": "王芳"}
    # candidates: capitalised words of four letters or more and adjacent pairs; no acronyms
    assert capitalised_names("Please ask Wang Fang, not IBM.") == ["Please", "Wang", "Fang", "Wang Fang"]


def test_the_question_is_rewritten_with_the_passages_spelling() -> None:
    names = {"Qinghe": "清河"}
    assert (
        with_passage_spellings("When does the first ferry leave Qinghe?", names)
        == "When does the first ferry leave 清河?"
    )
    assert (
        with_passage_spellings("When does the first ferry leave?", {}) == "When does the first ferry leave?"
    )


def test_the_reader_sees_the_passages_spelling_beside_the_questions() -> None:
    names = {"Qinghe": "清河"}
    question = "When does the first ferry leave Qinghe?"
    assert (
        with_passage_spellings(question, names, beside=True)
        == "When does the first ferry leave Qinghe (清河)?"
    )
