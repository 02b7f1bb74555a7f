"""The question's hard budget (seconds, LLM calls, tokens): once spent, the graph stops where it is and
returns the draft it has, flagged partial with every sentence unchecked, or refuses; it never errors or
runs on. Visible in the trace as the ``stop_on_budget`` step."""

from __future__ import annotations

import time

import pytest

from core.errors import ConfigError
from core.settings import QuestionBudget
from graphs.rag.routing import budget_exhausted_by
from tests.graphs.helpers import ScriptedChatModel
from tests.graphs.scripts import ALL_FULLY, FixedClassifier, cite, nodes_run, numbered, run_turn, step

QUESTION = "How many days of annual leave do Northwind employees get?"
ANSWER = cite("Northwind employees get 25 days of annual leave.", "25 days")


def answering_llm() -> ScriptedChatModel:
    return ScriptedChatModel(replies={"generate_answer": ANSWER, "check_support": ALL_FULLY})


def test_out_of_llm_calls_after_the_draft_the_answer_comes_back_partial_and_unchecked(make_graph) -> None:
    llm = answering_llm()
    graph, _ = make_graph(llm)
    state = run_turn(graph, QUESTION, route="single", budget={"llm_calls": 1})

    assert llm.prompts_called() == ["generate_answer"]  # the check would have been call 2
    assert nodes_run(state)[-2:] == ["stop_on_budget", "finalize_answer"]
    assert state["budget_exhausted"] == "llm_calls: 1 of 1"
    assert "25 days" in state["answer"] and not state["refused"]
    assert [v["verdict"] for v in state["support"]] == ["unchecked"]  # never passed off as checked
    decision = step(state, "stop_on_budget")
    assert decision["spent"]["llm_calls"] == 1 and decision["budget"]["llm_calls"] == 1
    assert decision["then"] == "finalize_answer"


def test_out_of_time_before_any_draft_the_turn_refuses_and_says_why(make_graph) -> None:
    llm = answering_llm()
    graph, _ = make_graph(llm)
    state = run_turn(graph, QUESTION, route="single", budget={"seconds": 1e-6})

    assert llm.prompts_called() == []
    assert state["refused"] and "budget ran out (seconds:" in state["refusal_reason"]
    assert step(state, "stop_on_budget")["then"] == "refuse"


def test_out_of_time_after_every_sentence_was_judged_unsupported_the_turn_refuses(make_graph) -> None:
    from tests.graphs.scripts import support

    llm = ScriptedChatModel(replies={"generate_answer": ANSWER, "check_support": support("not")})
    graph, _ = make_graph(llm, graph={"regenerate_unsupported": True})  # the next step would rewrite it
    state = run_turn(graph, QUESTION, route="single", budget={"llm_calls": 2})  # the answer, the judge

    assert step(state, "stop_on_budget")["then"] == "refuse"  # not an empty "answer" with nothing kept
    assert state["refused"] and state["answer"].strip()
    assert state["refusal_reason"].startswith("no sentence of the answer was supported by the sources, and")


def test_a_token_budget_counts_input_and_output_tokens(make_graph) -> None:
    llm = answering_llm()  # the scripted model reports 10 input + 5 output tokens per call
    graph, _ = make_graph(llm)
    state = run_turn(graph, QUESTION, route="single", budget={"llm_tokens": 15})
    assert state["budget_exhausted"] == "llm_tokens: 15 of 15"
    assert state["llm_calls"] == 1


def test_the_budget_cuts_a_loop_short_of_its_own_bound(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "ircot_reason": numbered('{{"thought": "Still looking for fact {i}.", "answer_found": false}}'),
            "generate_answer": ANSWER,
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(llm, classifier=FixedClassifier("iterative"), graph={"max_ircot_steps": 5})
    state = run_turn(graph, QUESTION, budget={"llm_calls": 2})
    assert llm.prompts_called() == ["ircot_reason", "ircot_reason"]
    assert state["refused"] and state["budget_exhausted"] == "llm_calls: 2 of 2"


def test_the_settings_budget_applies_when_the_request_sets_none(make_graph) -> None:
    llm = answering_llm()
    graph, _ = make_graph(llm, graph={"budget": {"llm_calls": 1}})
    state = run_turn(graph, QUESTION, route="single")
    assert state["budget_exhausted"] == "llm_calls: 1 of 1"


def test_a_budget_that_is_not_spent_changes_nothing(make_graph) -> None:
    llm = answering_llm()
    graph, _ = make_graph(llm)
    state = run_turn(graph, QUESTION, route="single", budget={"seconds": 600, "llm_calls": 5})
    assert state["budget_exhausted"] is None and "stop_on_budget" not in nodes_run(state)
    assert [v["verdict"] for v in state["support"]] == ["fully"]


def test_an_invalid_budget_is_one_error_naming_the_field(make_graph) -> None:
    graph, _ = make_graph(answering_llm())
    with pytest.raises(ConfigError, match=r"configurable\.budget\.llm_calls"):
        run_turn(graph, QUESTION, route="single", budget={"llm_calls": 0})
    with pytest.raises(ConfigError, match=r"configurable\.budget\.minutes"):
        run_turn(graph, QUESTION, route="single", budget={"minutes": 1})


def test_which_limit_is_reached_is_named_with_what_was_spent() -> None:
    state = {"budget": {"seconds": 10.0, "llm_calls": None}, "turn_started_at": 100.0, "llm_calls": 99}
    assert budget_exhausted_by(state, now=105.0) is None
    assert budget_exhausted_by(state, now=110.5) == "seconds: 10.5 of 10"
    assert budget_exhausted_by({"budget": {}, "turn_started_at": time.time()}) is None


def test_a_server_ceiling_is_tightened_but_never_loosened_by_a_request() -> None:
    ceiling = QuestionBudget(seconds=60, llm_calls=10, llm_tokens=None)
    asked = QuestionBudget(seconds=600, llm_calls=3, llm_tokens=5000)
    assert ceiling.tightened_by(asked) == QuestionBudget(seconds=60, llm_calls=3, llm_tokens=5000)
    assert ceiling.tightened_by(None) == ceiling
