"""The question is read once: each fact on questions from domains no benchmark holds, including the
cases where a rule must not fire, and the facts of a follow-up are those of its standalone question."""

from __future__ import annotations

import pytest

from graphs.rag.nodes._question_facts import facts_of, read_question
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, cite, run_turn


@pytest.mark.parametrize(
    ("question", "constraints", "time_sensitive"),
    [
        ("Which bridge over the river opened in 1937?", ["1937"], True),
        ("第三届大会在哪里举行？", ["第三届"], False),
        ("What is the latest firmware version for the router?", [], True),
        # must not fire: no year, no ordinal, nothing about "latest"
        ("How tall is the radio tower?", [], False),
        ("烤苹果蛋糕需要多长时间？", [], False),
    ],
)
def test_years_and_ordinals_an_answer_must_hold_for(question, constraints, time_sensitive) -> None:
    facts = read_question(question, question)
    assert facts.constraints == constraints and facts.time_sensitive is time_sensitive


@pytest.mark.parametrize(
    ("standalone", "message", "previous", "excluded", "search_text"),
    [
        ("Besides the Tate, which galleries did she visit in London?", None, "", ["the Tate"],
         "which galleries did she visit in London?"),
        ("除了长城，还有哪些景点？", None, "", ["长城"], "还有哪些景点？"),
        # "what else?" excludes what the last answer gave
        ("What else did the Hanseatic League trade?", "What else?", "salt", ["salt"],
         "What else did the Hanseatic League trade?"),
        # must not fire: nothing asked besides, and a follow-up that asks for more of the same thing
        ("How tall is the radio tower?", "How tall is it?", "324 m", [], "How tall is the radio tower?"),
    ],
)  # fmt: skip
def test_what_the_question_asks_for_something_other_than(
    standalone, message, previous, excluded, search_text
):
    facts = read_question(standalone, message or standalone, previous)
    assert facts.excluded == excluded and facts.search_text == search_text


@pytest.mark.parametrize(
    ("message", "names_documents", "is_question"),
    [
        ("According to the manual, how do I reset the router?", True, True),
        ("手册里说路由器怎么重置？", True, True),
        ("How do I reset the router?", False, True),
        ("Thanks, that helps!", False, False),
        ("好的，谢谢", False, False),
    ],
)
def test_a_question_naming_the_documents_and_a_message_that_is_no_question(
    message, names_documents, is_question
):
    facts = read_question(message, message)
    assert facts.names_documents is names_documents and facts.is_question is is_question
    assert facts.language == ("zh" if any("\u4e00" <= ch <= "\u9fff" for ch in message) else "en")


def test_a_state_without_facts_is_read_on_the_spot() -> None:
    state = {
        "standalone_question": "Which bridge opened in 1937?",
        "question": "Which bridge opened in 1937?",
    }
    assert facts_of(state).constraints == ["1937"]


def test_a_follow_up_is_read_as_its_standalone_question(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Full-time employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
            "contextualize_question": "How many annual leave days did Northwind grant in 2021?",
        }
    )
    graph, _ = make_graph(llm, reranker=ScriptedReranker(default=0.9), checkpointer="settings")
    first = run_turn(
        graph, "How many days of annual leave do Northwind employees get?", route="single", thread_id="f"
    )
    assert first["question_facts"]["constraints"] == []
    second = run_turn(graph, "And in 2021?", route="single", thread_id="f")
    assert second["question_facts"]["constraints"] == ["2021"]
    assert (
        second["question_facts"]["search_text"] == "How many annual leave days did Northwind grant in 2021?"
    )
