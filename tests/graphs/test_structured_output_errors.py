"""A malformed structured reply (still invalid after the model's one retry) never crashes the run:
each node falls back, and nothing unverified is reported as supported."""

from __future__ import annotations

from graphs.rag.classifier.llm import LLMComplexityClassifier
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, NO_BRIDGE, FixedClassifier, cite, run_turn, step

QUESTION = "How many days of annual leave do Northwind employees get?"
ANSWER = cite("Northwind employees get 25 days of annual leave.", "25 days")
GARBAGE = "Sure! Here is my verdict: everything looks fine"


def test_a_malformed_support_judgement_leaves_sentences_unchecked(make_graph) -> None:
    llm = ScriptedChatModel(replies={"generate_answer": ANSWER, "check_support": GARBAGE})
    graph, _ = make_graph(llm, reranker=ScriptedReranker(default=0.9))
    state = run_turn(graph, QUESTION, route="single")
    assert llm.prompts_called() == ["generate_answer", "check_support", "check_support"]  # one retry inside
    assert [v["verdict"] for v in state["support"]] == ["unchecked"]
    assert state["answers_question"] is None
    assert "SupportJudgement" in step(state, "check_support")["error"]
    assert "25 days" in state["answer"] and not state["refused"]
    assert state["llm_calls"] == 3  # the retry is counted


def test_malformed_reasoning_ends_ircot_and_answers_from_what_was_gathered(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "bridge_name": NO_BRIDGE,
            "ircot_reason": '{"thought": 42}',
            "generate_answer": ANSWER,
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(
        llm, reranker=ScriptedReranker(default=0.9), classifier=FixedClassifier("iterative")
    )
    state = run_turn(graph, QUESTION)
    assert state["ircot_steps"] == 1 and state["reasoning_done"]
    assert "unusable" in step(state, "ircot_reason")["stop"]
    assert "25 days" in state["answer"]


def test_a_malformed_multi_query_reply_falls_back_to_the_question(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "multi_query": "[not json",
            "generate_answer": ANSWER,
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(
        llm, reranker=ScriptedReranker(default=0.9), graph={"query_transform": "multi_query"}
    )
    state = run_turn(graph, QUESTION, route="single")
    decision = step(state, "transform_query")
    assert decision["queries"] == [QUESTION] and decision["fallback"] == "the original question only"


def test_the_llm_classifier_falls_back_to_single_on_malformed_output() -> None:
    llm = ScriptedChatModel(replies={"classify_question": "iterative, I think"})
    decision = LLMComplexityClassifier(llm).classify("Which is older, A or B?")
    assert decision.route == "single" and decision.confidence == 0.0
    assert "unusable" in decision.reason
