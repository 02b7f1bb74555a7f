"""Every loop ends at its own bound (counter in the state, bound in settings), never at LangGraph's
recursion limit: each test uses a model that always fails the check."""

from __future__ import annotations

import pytest

from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import (
    ALL_FULLY,
    NO_BRIDGE,
    FixedClassifier,
    cite,
    numbered,
    run_turn,
    step,
    support,
)

QUESTION = "How many days of annual leave do Northwind employees get?"
ANSWER = cite("Northwind employees get 25 days of annual leave.", "25 days")


@pytest.mark.parametrize("bound", [1, 3])
def test_ircot_stops_at_its_step_bound(make_graph, bound: int) -> None:
    llm = ScriptedChatModel(
        replies={
            "bridge_name": NO_BRIDGE,
            "ircot_reason": numbered(
                '{{"thought": "Still looking for fact number {i}.", "answer_found": false}}'
            ),
            "generate_answer": ANSWER,
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(llm, classifier=FixedClassifier("iterative"), graph={"max_ircot_steps": bound})
    state = run_turn(graph, QUESTION)
    assert state["ircot_steps"] == bound
    assert llm.prompts_called().count("ircot_reason") == bound
    assert step(state, "ircot_reason")["stop"] == f"step bound reached ({bound}/{bound})"
    assert state["answer"]  # the run ended with an answer from what was gathered


def test_ircot_stops_when_the_reasoning_repeats_itself(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "bridge_name": NO_BRIDGE,
            "ircot_reason": '{"thought": "The leave policy is in the handbook.", "answer_found": false}',
            "generate_answer": ANSWER,
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(llm, classifier=FixedClassifier("iterative"), graph={"max_ircot_steps": 5})
    state = run_turn(graph, QUESTION)
    assert state["ircot_steps"] == 2
    assert step(state, "ircot_reason")["stop"] == "the reasoning repeated itself"


@pytest.mark.parametrize("bound", [0, 2])
def test_unsupported_answers_are_regenerated_up_to_the_bound_then_never_passed_off(
    make_graph, bound: int
) -> None:
    llm = ScriptedChatModel(
        replies={"generate_answer": ANSWER, "generate_answer_strict": ANSWER, "check_support": support("not")}
    )
    graph, _ = make_graph(
        llm,
        reranker=ScriptedReranker(default=0.9),
        graph={"max_support_retries": bound, "regenerate_unsupported": True},
    )
    state = run_turn(graph, QUESTION, route="single")
    assert state["support_retries"] == bound
    assert llm.prompts_called().count("generate_answer_strict") == bound
    assert llm.prompts_called().count("check_support") == bound + 1
    # Every sentence stayed unsupported: the turn refuses instead of presenting them.
    assert state["refused"]
    assert state["refusal_reason"] == "no sentence of the answer was supported by the sources"


def test_unsupported_sentences_are_removed_and_supported_ones_kept(make_graph) -> None:
    two_sentences = lambda messages: ANSWER(messages) + " The policy also covers unicorn riding lessons. [1]"  # noqa: E731
    llm = ScriptedChatModel(
        replies={
            "generate_answer": two_sentences,
            "generate_answer_strict": two_sentences,
            "check_support": support("fully", "not"),
        }
    )
    graph, _ = make_graph(llm, reranker=ScriptedReranker(default=0.9), graph={"max_support_retries": 1})
    state = run_turn(graph, QUESTION, route="single")
    assert "unicorn" not in state["answer"] and "25 days" in state["answer"]
    removed = [v for v in state["support"] if v["removed"]]
    assert [v["verdict"] for v in removed] == ["not"] and "unicorn" in removed[0]["sentence"]
    assert not state["refused"]


@pytest.mark.parametrize("bound", [1, 2])
def test_answers_that_miss_the_question_trigger_re_retrieval_up_to_the_bound_then_a_refusal(
    make_graph, bound: int
) -> None:
    llm = ScriptedChatModel(
        replies={
            "generate_answer": ANSWER,
            "check_support": support("fully", useful=False),
            "rewrite_query": numbered("annual leave entitlement variant {i}"),
        }
    )
    graph, _ = make_graph(
        llm, reranker=ScriptedReranker(default=0.9), graph={"max_usefulness_retries": bound}
    )
    state = run_turn(graph, QUESTION, route="single")
    assert state["usefulness_retries"] == bound
    assert llm.prompts_called().count("rewrite_query") == bound
    assert state["queries_issued"][-1] == f"annual leave entitlement variant {bound}"
    assert state["answers_question"] is False
    assert state["refused"]  # still beside the question once the loop is spent: refused, not passed off


def test_a_generator_that_finds_nothing_re_retrieves_then_refuses(make_graph) -> None:
    llm = ScriptedChatModel(replies={"generate_answer": "NOT_FOUND", "rewrite_query": "leave days"})
    graph, _ = make_graph(llm, reranker=ScriptedReranker(default=0.9), graph={"max_usefulness_retries": 1})
    state = run_turn(graph, QUESTION, route="single")
    assert state["usefulness_retries"] == 1
    assert llm.prompts_called() == ["generate_answer", "rewrite_query", "generate_answer"]
    assert state["refused"] and "do not contain the answer" in state["refusal_reason"]


@pytest.mark.parametrize("bound", [0, 2])
def test_crag_knowledge_base_retries_stop_at_the_bound(make_graph, bound: int) -> None:
    llm = ScriptedChatModel(replies={"rewrite_query": numbered("another query {i}")})
    graph, _ = make_graph(llm, reranker=ScriptedReranker(default=0.01), graph={"max_crag_retries": bound})
    state = run_turn(graph, QUESTION, route="single")
    assert state["crag_retries"] == bound
    assert llm.prompts_called().count("rewrite_query") == bound
    assert state["refused"]
