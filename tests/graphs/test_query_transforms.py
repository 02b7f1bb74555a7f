"""Query transforms before retrieval: each keeps the question and adds what the model wrote."""

from __future__ import annotations

import json

import pytest

from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, cite, run_turn, step

QUESTION = "How many days of annual leave do Northwind employees get?"


@pytest.mark.parametrize(
    ("transform", "prompt", "reply", "added"),
    [
        ("multi_query", "multi_query", json.dumps({"queries": ["paid vacation days", "holiday entitlement"]}),
         ["paid vacation days", "holiday entitlement"]),
        ("decompose", "decompose_question", json.dumps({"queries": ["What is Northwind's leave policy?"]}),
         ["What is Northwind's leave policy?"]),
        ("hyde", "hyde", "Employees are entitled to 25 days of paid leave each year.",
         ["Employees are entitled to 25 days of paid leave each year."]),
        ("step_back", "step_back", "What is Northwind's leave policy?", ["What is Northwind's leave policy?"]),
    ],
)  # fmt: skip
def test_each_transform_adds_its_queries_to_the_question(make_graph, transform, prompt, reply, added) -> None:
    llm = ScriptedChatModel(
        replies={
            prompt: reply,
            "generate_answer": cite("25 days of leave.", "25 days"),
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(llm, reranker=ScriptedReranker(default=0.9), graph={"query_transform": transform})
    state = run_turn(graph, QUESTION, route="single")
    assert step(state, "transform_query")["queries"] == [QUESTION, *added]
    assert step(state, "retrieve")["queries"] == [QUESTION, *added]
    assert state["llm_calls"] == 3


def test_a_run_config_can_choose_the_transform(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "step_back": "What is the leave policy?",
            "generate_answer": cite("25 days.", "25 days"),
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(llm, reranker=ScriptedReranker(default=0.9))
    state = run_turn(graph, QUESTION, route="single", query_transform="step_back")
    assert step(state, "transform_query")["transform"] == "step_back"
