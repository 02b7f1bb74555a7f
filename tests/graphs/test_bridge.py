"""A multi-hop question with its bridge named (``graph.name_bridges``): the model copies the question's
describing words and the passages' name for them, code checks both copies and writes the single-hop
question the reader is shown. Cases from an orchestra, a lighthouse and a Chinese school, written before
any benchmark question was looked at; a scripted model stands in for the copies (the real model's are
measured in ``bench/results/name_bridges_reader_only_multi_hop.json``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.settings import load_settings
from graphs.rag.nodes._bridge import BridgeSpans, bridged_question
from graphs.rag.nodes.generate_answer import generate_answer
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel


def _passage(n: int, text: str) -> dict[str, Any]:
    return {"n": n, "chunk_id": f"p::{n}", "doc_id": "p", "source": "notes.md", "title": "Notes",
            "page": None, "url": None, "origin": "kb", "text": text}  # fmt: skip


CONTEXT = [
    _passage(1, "The Harwick Orchestra is led by Lena Sorvik, who joined it in 2011."),
    _passage(2, "Lena Sorvik trained as a cellist in Tallinn."),
    _passage(3, "青松中学的校长是刘明，他在学校工作了二十年。"),
]


@pytest.mark.parametrize(
    ("question", "description", "name", "bridged"),
    [
        (
            "What instrument did the conductor of the Harwick Orchestra train on?",
            "the conductor of the Harwick Orchestra",
            "Lena Sorvik",
            "What instrument did Lena Sorvik train on?",
        ),
        (  # the copy may differ in case and spacing
            "The  conductor of the Harwick Orchestra trained where?",
            "the conductor of the harwick orchestra",
            "lena sorvik",
            "lena sorvik trained where?",
        ),
        ("青松中学的校长在学校工作了多少年？", "青松中学的校长", "刘明", "刘明在学校工作了多少年？"),
    ],
)
def test_the_description_is_replaced_by_the_name_the_passages_give_it(
    question: str, description: str, name: str, bridged: str
) -> None:
    spans = BridgeSpans(description=description, name=name)
    assert bridged_question(question, spans, CONTEXT) == (bridged, "")


@pytest.mark.parametrize(
    ("question", "description", "name", "why"),
    [
        # nothing described: a comparison that names both things
        ("Which is taller, the North Light or the South Light?", "", "", "nothing described"),
        # a paraphrase, not the question's words
        ("What instrument did the conductor of the Harwick Orchestra train on?",
         "the Harwick conductor", "Lena Sorvik", "the description is not the question's words"),
        # a name from memory, not from the passages
        ("Who built the lighthouse on Skerry Point?", "the lighthouse on Skerry Point",
         "Eddystone Light", "no passage writes the name"),
        # the question names it already
        ("Where did Lena Sorvik train?", "Lena Sorvik", "Lena Sorvik", "the question already names it"),
    ],
)  # fmt: skip
def test_no_question_is_written_unless_both_copies_hold(
    question: str, description: str, name: str, why: str
) -> None:
    assert bridged_question(question, BridgeSpans(description=description, name=name), CONTEXT) == ("", why)


def _state(question: str, route: str) -> dict[str, Any]:
    return {"question": question, "standalone_question": question, "language": "en", "route": route,
            "context": CONTEXT}  # fmt: skip


@pytest.mark.parametrize(
    ("switch", "route", "question", "asked"),
    [
        (True, "iterative", "What instrument did the conductor of the Harwick Orchestra train on?", True),
        (False, "iterative", "What instrument did the conductor of the Harwick Orchestra train on?", False),
        (True, "single", "What instrument did the conductor of the Harwick Orchestra train on?", False),
        (
            True,
            "iterative",
            "Did the conductor of the Harwick Orchestra train as a cellist?",
            False,
        ),  # yes/no
    ],
)
def test_the_reader_sees_the_bridged_question_on_the_iterative_route_with_the_switch(
    switch: bool, route: str, question: str, asked: bool
) -> None:
    spans = {"description": "the conductor of the Harwick Orchestra", "name": "Lena Sorvik"}
    llm = ScriptedChatModel(
        replies={"bridge_name": json.dumps(spans), "generate_answer": "Lena Sorvik trained as a cellist. [2]"}
    )
    settings = load_settings(graph={"name_bridges": switch, "yes_no_verdict": False})
    update = generate_answer(_state(question, route), {}, resources=Resources(settings, llm=llm))

    assert [name for name, _ in llm.calls] == (["bridge_name"] if asked else []) + ["generate_answer"]
    reader_prompt = llm.calls[-1][1][-1].text
    assert ("What instrument did Lena Sorvik train on?" in reader_prompt) is asked
    assert update["bridge"].get("question", "") == (
        "What instrument did Lena Sorvik train on?" if asked else ""
    )
    assert ("bridge" in update["steps"][-1]["decision"]) is asked


def test_a_rejected_copy_is_traced_and_the_reader_sees_the_question_alone() -> None:
    spans = {"description": "the Harwick conductor", "name": "Lena Sorvik"}
    llm = ScriptedChatModel(replies={"bridge_name": json.dumps(spans), "generate_answer": "NOT_FOUND"})
    settings = load_settings(graph={"name_bridges": True})
    question = "What instrument did the conductor of the Harwick Orchestra train on?"
    update = generate_answer(_state(question, "iterative"), {}, resources=Resources(settings, llm=llm))

    assert update["bridge"]["rejected"] == "the description is not the question's words"
    assert "so the question asks" not in llm.calls[-1][1][-1].text


def test_a_regeneration_shows_the_bridged_question_without_asking_again() -> None:
    from graphs.rag.nodes.regenerate_answer import regenerate_answer

    llm = ScriptedChatModel(replies={"generate_answer_strict": "Lena Sorvik trained as a cellist. [2]"})
    settings = load_settings(graph={"name_bridges": True})
    bridge = {
        "question": "What instrument did Lena Sorvik train on?",
        "description": "the conductor of the Harwick Orchestra",
        "name": "Lena Sorvik",
    }
    question = "What instrument did the conductor of the Harwick Orchestra train on?"
    state = {**_state(question, "iterative"), "bridge": bridge, "support": []}
    regenerate_answer(state, {}, resources=Resources(settings, llm=llm))

    assert [name for name, _ in llm.calls] == ["generate_answer_strict"]
    assert "What instrument did Lena Sorvik train on?" in llm.calls[-1][1][-1].text
