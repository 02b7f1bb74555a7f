"""IRCoT's own answer as the draft when the iterative reader says NOT_FOUND (``graph.answer_from_reasoning``).

The cases are written from other domains than the benchmarks; the rule must fire only when the
reasoning's last sentence states an answer that a passage states word for word."""

from __future__ import annotations

import pytest

from graphs.rag.nodes._reasoning_answer import draft_from_reasoning, stated_answer

BRIDGE = {
    1: "The Nordhavn ferry terminal was designed by the architect Ingrid Solberg in 2004.",
    2: "Ingrid Solberg (born 1961 in Tromsø) is a Norwegian architect known for harbour buildings.",
}


@pytest.mark.parametrize(
    ("thought", "answer"),
    [
        ("Ingrid Solberg was born in Tromsø. So the answer is: Tromsø.", "Tromsø"),
        ('So the answer is "Ingrid Solberg".', "Ingrid Solberg"),
        ("The answer is 1961", "1961"),
        ("余华出生于浙江杭州，所以答案是：浙江杭州。", "浙江杭州"),
        ("答案为《活着》", "活着"),
        ("Ingrid Solberg designed the terminal.", ""),  # a fact, no answer stated
        ("I still need to find where Ingrid Solberg was born.", ""),
    ],
)
def test_the_stated_answer_is_what_follows_the_answer_is(thought: str, answer: str) -> None:
    assert stated_answer(thought) == answer


def test_a_bridge_answer_a_passage_states_becomes_the_draft_citing_that_passage() -> None:
    reasoning = [
        "The Nordhavn ferry terminal was designed by Ingrid Solberg.",
        "Ingrid Solberg was born in Tromsø. So the answer is: Tromsø.",
    ]
    draft, passage = draft_from_reasoning(reasoning, BRIDGE)
    assert passage == 2
    assert draft.startswith("The Nordhavn ferry terminal was designed by Ingrid Solberg.")
    assert draft.endswith("So the answer is: Tromsø. [2]")


def test_a_chinese_chain_is_read_the_same_way() -> None:
    passages = {1: "《活着》是余华的长篇小说。", 2: "余华，1960年4月3日出生于浙江杭州。"}
    drafted = draft_from_reasoning(
        ["《活着》的作者是余华。", "余华出生于浙江杭州，所以答案是：浙江杭州。"], passages
    )
    assert drafted is not None and drafted[1] == 2


@pytest.mark.parametrize(
    ("reasoning", "why"),
    [
        ([], "no reasoning"),
        (["Ingrid Solberg designed the terminal."], "the last sentence states no answer"),
        (["Ingrid Solberg was born in Tromsø. So the answer is: Bergen."], "no passage states Bergen"),
        (["Both are Norwegian, so the answer is: yes."], "yes/no needs two facts, not one copy"),
        (["所以答案是：是"], "a bare 是 is no checkable answer"),
        (
            [f"So the answer is: {'Tromsø and the harbour buildings of the north ' * 3}"],
            "too long to be an answer",
        ),
        (["So the answer is: ."], "an empty answer"),
    ],
)
def test_it_does_not_fire_on_an_answer_code_cannot_check(reasoning: list[str], why: str) -> None:
    passages = {**BRIDGE, 3: "Yes, both architects were Norwegian, is what the yes-or-no quiz said."}
    assert draft_from_reasoning(reasoning, passages) is None, why


def test_the_answer_is_matched_across_case_and_spacing_not_as_a_fragment_of_another_word() -> None:
    assert draft_from_reasoning(["So the answer is: ingrid  SOLBERG"], BRIDGE) is not None
    assert draft_from_reasoning(["So the answer is: Solbergs"], BRIDGE) is None
    assert draft_from_reasoning(["So the answer is: Solb"], BRIDGE) is None  # inside "Solberg"
    assert draft_from_reasoning(["So the answer is: harbour"], BRIDGE) is not None
