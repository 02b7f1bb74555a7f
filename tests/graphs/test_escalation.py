"""A question the router sent on the single route, which that route would refuse, is asked once more on
the iterative route (``graph.escalate_to_iterative``): the router reads no passage, and some two-hop
questions read like lookups. Scripted models stand in for the reader; the real model's effect is
measured in ``bench/results/escalate_to_iterative_*.json``."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from graphs.rag.routing import may_escalate
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, FixedClassifier, cite, nodes_run, run_turn, step

QUESTION = "How many days of annual leave do Northwind employees get?"
THOUGHT = '{"thought": "The handbook gives the annual leave in days.", "answer_found": false}'


def reader_that_answers_after_reasoning(llm: ScriptedChatModel, after_reasoning: bool = True) -> Any:
    """NOT_FOUND until IRCoT has reasoned in this turn (with ``after_reasoning``), then a cited answer."""
    answer = cite("Northwind employees get 25 days of annual leave.", "25 days")

    def reply(messages: list[BaseMessage]) -> str:
        reasoned = "ircot_reason" in llm.prompts_called()
        return answer(messages) if reasoned and after_reasoning else "NOT_FOUND"

    return reply


def scripted(after_reasoning: bool = True) -> ScriptedChatModel:
    llm = ScriptedChatModel(
        replies={"ircot_reason": THOUGHT, "rewrite_query": "annual leave days", "check_support": ALL_FULLY}
    )
    reader = reader_that_answers_after_reasoning(llm, after_reasoning)
    llm.replies["generate_answer"] = reader
    llm.replies["generate_answer_strict"] = reader
    return llm


def test_a_single_question_the_single_route_would_refuse_is_asked_once_on_the_iterative_route(
    make_graph,
) -> None:
    llm = scripted()
    graph, _ = make_graph(
        llm,
        classifier=FixedClassifier("single"),
        reranker=ScriptedReranker(default=0.9),
        graph={"escalate_to_iterative": True},
    )
    state = run_turn(graph, QUESTION)

    assert not state["refused"] and "25 days" in state["answer"]
    assert state["route"] == "iterative"
    run = nodes_run(state)
    assert run.count("escalate_to_iterative") == 1
    assert run.index("escalate_to_iterative") < run.index("ircot_reason")
    assert step(state, "escalate_to_iterative")["reason"].startswith("the single route would refuse: ")


@pytest.mark.parametrize(
    ("switch", "forced_route"),
    [(False, None), (True, "single")],  # switched off; a route the caller forced is kept
)
def test_without_the_switch_or_on_a_forced_route_the_single_route_refuses(
    make_graph, switch: bool, forced_route: str | None
) -> None:
    llm = scripted()
    graph, _ = make_graph(
        llm,
        classifier=FixedClassifier("single"),
        reranker=ScriptedReranker(default=0.9),
        graph={"escalate_to_iterative": switch},
    )
    state = run_turn(graph, QUESTION, route=forced_route)

    assert state["refused"]
    assert "escalate_to_iterative" not in nodes_run(state) and "ircot_reason" not in llm.prompts_called()


def test_the_iterative_try_is_made_once_and_then_the_turn_refuses(make_graph) -> None:
    llm = scripted(after_reasoning=False)
    graph, _ = make_graph(
        llm,
        classifier=FixedClassifier("single"),
        reranker=ScriptedReranker(default=0.9),
        graph={"escalate_to_iterative": True},
    )
    state = run_turn(graph, QUESTION)

    assert state["refused"]
    assert nodes_run(state).count("escalate_to_iterative") == 1
    assert state["refusal_reason"].startswith("the passages do not contain the answer")


@pytest.mark.parametrize(
    ("state", "escalates"),
    [
        ({"route": "single"}, True),
        ({"route": "single", "route_request": "auto"}, True),
        ({"route": "single", "route_request": "single"}, False),  # forced by the caller
        ({"route": "single", "direct_fallback": True}, False),  # its fallback is the direct answer
        ({"route": "single", "escalated_to_iterative": True}, False),  # once a turn
        ({"route": "iterative"}, False),
        ({"route": "direct"}, False),
    ],
)
def test_which_turns_may_escalate(state: dict[str, Any], escalates: bool) -> None:
    assert may_escalate(state) is escalates  # type: ignore[arg-type]
