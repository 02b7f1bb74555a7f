"""The run's context (LangGraph's ``context_schema``): the caller's ACL groups and this run's overrides,
validated once when the run starts and read by every node; the older ``configurable`` keys still work
for graphs that embed ragpilot and forward their config."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import ConfigError
from core.settings import QuestionBudget
from graphs.rag.node_options import NodeOptions
from graphs.rag.run_context import RunContext
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, cite, step

QUESTION = "How many days of annual leave do Northwind employees get?"


@pytest.fixture
def reranker() -> ScriptedReranker:
    return ScriptedReranker({"handbook::c0": 0.92}, default=0.3)


def answering_llm() -> ScriptedChatModel:
    return ScriptedChatModel(
        replies={
            "generate_answer": cite("Employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
        }
    )


def final_state(
    graph: Any, context: Any = None, configurable: dict[str, Any] | None = None
) -> dict[str, Any]:
    final: dict[str, Any] = {}
    request = {"question": QUESTION, "route_request": "single"}
    config = {"configurable": configurable or {}}
    for state in graph.stream(request, config, context=context, stream_mode="values"):
        final = state
    return final


def test_the_context_names_the_groups_every_search_runs_as(make_graph, reranker) -> None:
    graph, _ = make_graph(answering_llm(), reranker=reranker)

    state = final_state(graph, RunContext(user_groups=("finance-only",)))

    # Every caller also reads 'public' documents (the test handbook is public).
    assert step(state, "retrieve")["groups"] == ["finance-only", "public"]
    assert step(state, "expand_context")  # ran with the same groups (its search is checked in tools/)


def test_the_context_wins_over_configurable_keys(make_graph, reranker) -> None:
    graph, _ = make_graph(answering_llm(), reranker=reranker)

    state = final_state(
        graph, RunContext(user_groups=("finance-only",)), configurable={"user_groups": ["hr"]}
    )

    assert step(state, "retrieve")["groups"] == ["finance-only", "public"]


def test_without_a_context_the_configurable_keys_are_read(make_graph, reranker) -> None:
    graph, _ = make_graph(answering_llm(), reranker=reranker)

    state = final_state(graph, configurable={"user_groups": ["hr"], "budget": {"llm_calls": 1}})

    assert step(state, "retrieve")["groups"] == ["hr", "public"]
    assert state["budget_exhausted"] == "llm_calls: 1 of 1"


def test_without_either_the_settings_defaults_apply(make_graph, reranker) -> None:
    graph, _ = make_graph(answering_llm(), reranker=reranker)

    state = final_state(graph)

    assert "public" in step(state, "retrieve")["groups"]
    assert state["budget_exhausted"] is None


def test_a_dict_context_is_validated_when_the_run_starts(make_graph) -> None:
    graph, _ = make_graph(answering_llm())
    with pytest.raises(ValueError, match="user_groups"):
        final_state(graph, {"user_groups": []})


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"user_groups": []}, "context.user_groups"),
        ({"user_groups": "finance"}, "context.user_groups"),  # a lone string is not a list of groups
        ({"user_groups": ["finance", "  "]}, "context.user_groups.1"),
        ({"query_transform": "summarise"}, "context.query_transform"),
        ({"budget": {"llm_calls": 0}}, "context.budget.llm_calls"),
        ({"budget": {"minutes": 3}}, "context.budget.minutes"),
        ({"groups": ["finance"]}, "context.groups"),  # a misspelt key is an error, not a silent default
    ],
)
def test_an_invalid_context_is_one_error_naming_the_field(values: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        RunContext.parse(values)


def test_an_unset_field_takes_the_settings_value(make_graph) -> None:
    _, settings = make_graph(answering_llm())
    options = NodeOptions.from_settings(settings)
    context = RunContext(budget=QuestionBudget(llm_calls=3))

    assert context.groups(options) == list(options.default_groups)
    assert context.transform(options) == options.graph.query_transform
    assert context.question_budget(options).llm_calls == 3
