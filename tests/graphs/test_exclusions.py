"""What a question asks for something other than, and an answer that names only that."""

from __future__ import annotations

import pytest

from graphs.rag.nodes._exclusions import (
    asks_for_more,
    excluded_items,
    repeated_exclusions,
    without_exclusions,
)


@pytest.mark.parametrize(
    ("question", "excluded"),
    [
        ('Who else did Li Wei write besides "Sparse Tricks"?', ["Sparse Tricks"]),
        ("What papers other than Dense Dreams did Ana Costa write?", ["Dense Dreams"]),
        ("Which offices apart from Madrid are open on Saturday?", ["Madrid"]),
        ("除了《山风》，他还获得过什么奖？", ["山风"]),
        ("除了绿茶以外还有什么茶？", ["绿茶"]),
        ("What is the capital of France?", []),
    ],
)
def test_the_item_after_besides_other_than_or_chu_le_is_excluded(question: str, excluded: list[str]) -> None:
    assert excluded_items(question) == excluded


def test_a_follow_up_asking_for_more_excludes_what_the_last_answer_gave() -> None:
    assert asks_for_more("Anyone else?") and asks_for_more("还有别的吗？")
    assert excluded_items("What else did Li Wei write?", "What else did he write?", "Sparse Tricks") == [
        "Sparse Tricks"
    ]
    # A follow-up that does not ask for another one keeps the last answer askable.
    assert excluded_items("When was Sparse Tricks published?", "And when?", "Sparse Tricks") == []
    assert excluded_items("Tell me more about Li Wei", "Tell me more about him", "Li Wei") == []


@pytest.mark.parametrize(
    ("short", "answer", "repeated"),
    [
        ("", 'Li Wei also wrote "Sparse Tricks", published in 2023. [1]', ["Sparse Tricks"]),
        ("Sparse Tricks", "Li Wei wrote Sparse Tricks. [1]", ["Sparse Tricks"]),
        ("Fusion at Scale", 'Besides "Sparse Tricks", Li Wei wrote "Fusion at Scale". [1]', []),
        ("", "Li Wei wrote Fusion at Scale. [1]", []),  # names nothing: nothing to compare
        # a short answer listing the excluded item beside another one gives something else as well
        (
            "the Maple Library and Sparse Tricks",
            "The campus has two: the Maple Library and Sparse Tricks. [1]",
            [],
        ),
        ("Sparse Tricks、Fusion at Scale", "", []),
        ("Sparse Tricks and Sparse Tricks", "", ["Sparse Tricks"]),  # every item listed is excluded
    ],
)
def test_an_answer_repeats_the_exclusion_when_everything_it_names_is_excluded(
    short: str, answer: str, repeated: list[str]
) -> None:
    assert repeated_exclusions(short, answer, ["Sparse Tricks"]) == repeated


@pytest.mark.parametrize(
    ("question", "scored_as"),
    [
        ('Who else did Li Wei write besides "Sparse Tricks"?', "Who else did Li Wei write?"),
        ("What papers other than Dense Dreams did Ana Costa write?", "What papers did Ana Costa write?"),
        ("除了《山风》，他还获得过什么奖？", "他还获得过什么奖？"),
        ("What is the capital of France?", "What is the capital of France?"),
    ],
)
def test_passages_are_scored_for_the_question_without_what_it_excludes(question: str, scored_as: str) -> None:
    # Refinement kept only "Li Wei also wrote 'Sparse Tricks'" for en-22: the excluded title outscored
    # the sentence that answers it.
    assert without_exclusions(question) == scored_as


@pytest.mark.parametrize(
    ("message", "asks"),
    [
        ("What else?", True),
        ("Any others?", True),
        ("What about the other one?", True),
        ("What other books did she write?", True),
        ("另外一部是什么？", True),
        ("还有别的吗？", True),
        # must not fire: a known thing asked about, or a new question introduced
        ("When did the other office open?", False),
        ("Who runs the other branch now?", False),
        ("另外，营业时间是几点？", False),
        ("另外,停车场在哪里？", False),
    ],
)  # fmt: skip
def test_asking_for_another_item_is_told_from_asking_about_the_other_one(message: str, asks: bool) -> None:
    from graphs.rag.nodes._exclusions import asks_for_another

    assert asks_for_another(message) is asks
