"""Adaptive-RAG routing: each route, escalation of 'direct', and caller-forced routes."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from graphs.rag.classifier.signals import asks_time_sensitive_fact
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, NO_BRIDGE, FixedClassifier, cite, nodes_run, run_turn, step


def test_direct_route_answers_without_retrieval(make_graph) -> None:
    llm = ScriptedChatModel(replies={"generate_direct": "Hello! How can I help?"})
    graph, _ = make_graph(llm, classifier=FixedClassifier("direct", 0.95))
    state = run_turn(graph, "Hello there")
    assert nodes_run(state) == ["start_turn", "route_question", "generate_direct", "finalize_answer"]
    assert state["answer"] == "Hello! How can I help?"
    assert state["citations"] == [] and state["llm_calls"] == 1


def test_unsure_direct_verdict_escalates_to_retrieval(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
        }
    )
    graph, settings = make_graph(llm, classifier=FixedClassifier("direct", 0.4))
    state = run_turn(graph, "How many days of annual leave do employees get?")
    decision = step(state, "route_question")
    assert state["route"] == "single" and decision["classifier_route"] == "direct"
    assert "direct_min_confidence" in decision["escalated"]
    assert "retrieve" in nodes_run(state)


def test_question_naming_the_users_documents_is_never_answered_directly(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(llm, classifier=FixedClassifier("direct", 0.99))
    state = run_turn(graph, "According to the handbook, how many days of annual leave do we get?")
    assert state["route"] == "single"
    assert step(state, "route_question")["escalated"] == "the question names the user's documents"


@pytest.mark.parametrize(
    "question",
    [
        "How many days of annual leave did employees get in 2021?",
        "What is the latest annual leave allowance?",
    ],
)
def test_a_question_about_a_given_year_or_the_latest_facts_is_never_answered_from_memory(
    make_graph, question: str
) -> None:
    # RGB's "我国2021年人口出生率" went 'direct' and the 1.5B model answered "1.57" (the source: 7.52‰).
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(llm, classifier=FixedClassifier("direct", 0.99))
    state = run_turn(graph, question)
    assert state["route"] == "single" and "retrieve" in nodes_run(state)
    assert (
        step(state, "route_question")["escalated"]
        == "the question asks about a given year or the latest facts"
    )


@pytest.mark.parametrize(
    ("question", "time_sensitive"),
    [
        ("我国2021年人口出生率", True),
        ("2022年苹果春季发布会的新手机", True),
        ("最新的年假政策是什么？", True),
        ("Who won the 1998 World Cup?", True),
        ("What is 17 times 23?", False),
        ("What is 3.1416 rounded to 2 decimals?", False),
        ("Call 020-12345678 for support?", False),
        ("嗨，最近怎么样？", False),
        ("Summarize in one word how you feel today", False),
    ],
)
def test_time_sensitive_questions_are_told_by_a_year_or_latest(question: str, time_sensitive: bool) -> None:
    assert asks_time_sensitive_fact(question) is time_sensitive


@pytest.mark.parametrize(
    "question", ["What is 17 times 23?", "What is 3.1416 rounded to 2 decimals?", "嗨，最近怎么样？"]
)
def test_arithmetic_and_greetings_stay_direct(make_graph, question: str) -> None:
    llm = ScriptedChatModel(replies={"generate_direct": "Hello!"})
    graph, settings = make_graph(
        llm, classifier=FixedClassifier("direct", 0.99), reranker=ScriptedReranker(default=0.05)
    )
    state = run_turn(graph, question)
    assert state["route"] == "direct"
    decision = step(state, "route_question")
    assert "escalated" not in decision
    assert decision["knowledge_base_probe"]["best_score"] <= settings.graph.crag_upper


def test_a_direct_verdict_retrieves_when_the_knowledge_base_answers_the_question(make_graph) -> None:
    # The follow-up benchmark's "How long does the apple cake bake?" went 'direct' with the recipe in the
    # knowledge base: the 1.5B model answered from memory, uncited, and the next turn built on it.
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
        }
    )
    graph, _ = make_graph(
        llm, classifier=FixedClassifier("direct", 0.99), reranker=ScriptedReranker(default=0.9)
    )
    state = run_turn(graph, "How many days of annual leave do employees get?")
    decision = step(state, "route_question")
    assert state["route"] == "single" and "retrieve" in nodes_run(state)
    assert decision["escalated"].startswith("a passage in the knowledge base scores 0.90")
    assert decision["knowledge_base_probe"]["best_passage"]["title"]
    assert state["citations"]


def test_a_direct_verdict_the_documents_may_answer_retrieves_first(make_graph) -> None:
    # A document question in the user's own words scores between CRAG's bars ("Who approves my
    # holiday?" 0.47 over a staff handbook), as general knowledge does ("What is 15 times 4?" 0.28).
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
            "generate_direct": "Most companies give 20 days.",
        }
    )
    graph, settings = make_graph(
        llm, classifier=FixedClassifier("direct", 0.99), reranker=ScriptedReranker(default=0.3)
    )
    state = run_turn(graph, "How much time off do I get?")
    decision = step(state, "route_question")
    assert settings.graph.crag_lower < 0.3 <= settings.graph.crag_upper
    assert state["route"] == "single" and decision["direct_fallback"] is True
    assert "crag_lower" in decision["escalated"]
    assert "generate_direct" not in nodes_run(state)
    assert state["answer"].startswith("Employees get 25 days") and state["citations"]


def reader_finds_nothing(**replies: str) -> ScriptedChatModel:
    """The reader says NOT_FOUND on every pass; ``replies`` script the other prompts."""
    return ScriptedChatModel(
        replies={"generate_answer": "NOT_FOUND", "generate_answer_strict": "NOT_FOUND", **replies}
    )


def test_when_the_documents_do_not_hold_it_the_direct_answer_is_the_fallback(make_graph) -> None:
    # One retrieval pass: no rewrite and second search for a question the model can answer itself.
    llm = reader_finds_nothing(generate_direct="15 times 4 is 60.")
    graph, _ = make_graph(
        llm, classifier=FixedClassifier("direct", 0.99), reranker=ScriptedReranker(default=0.3)
    )
    state = run_turn(graph, "What is 15 times 4?")
    ran = nodes_run(state)
    assert ran.count("retrieve") == 1 and "refuse" not in ran
    assert ran[-2:] == ["generate_direct", "finalize_answer"]
    assert state["answer"] == "15 times 4 is 60." and not state["refused"]
    assert state["route"] == "direct" and state["citations"] == [] and state["support"] == []
    assert step(state, "generate_direct")["fallback"].startswith("the documents do not hold the answer")
    # The next turn does not take the unused passages for the documents this answer came from.
    assert state["context"] == []


def test_without_direct_retrieves_first_a_middling_probe_stays_direct(make_graph) -> None:
    llm = ScriptedChatModel(replies={"generate_direct": "Most companies give 20 days."})
    graph, _ = make_graph(
        llm,
        classifier=FixedClassifier("direct", 0.99),
        reranker=ScriptedReranker(default=0.3),
        graph={"direct_retrieves_first": False},
    )
    state = run_turn(graph, "How much time off do I get?")
    assert state["route"] == "direct" and "retrieve" not in nodes_run(state)


def test_a_question_escalated_for_other_reasons_is_refused_not_answered_from_memory(make_graph) -> None:
    # Only a question sent to retrieval by a middling probe keeps the direct answer as its fallback.
    llm = reader_finds_nothing(rewrite_query="annual leave days")
    graph, _ = make_graph(
        llm, classifier=FixedClassifier("direct", 0.4), reranker=ScriptedReranker(default=0.3)
    )
    state = run_turn(graph, "How many days of annual leave do employees get?")
    assert state["refused"] and "generate_direct" not in nodes_run(state)


def run_aurora_question(
    make_graph, first_step_claims_answer: bool, **graph_settings: bool
) -> tuple[dict, list]:
    """The two-hop Aurora question, the model reasoning one hop per step (state, and the model's calls)."""
    claimed = "true" if first_step_claims_answer else "false"
    thoughts = iter(
        [
            f'{{"thought": "The Aurora project is led by Maria Chen.", "answer_found": {claimed}}}',
            '{"thought": "Maria Chen was born in Lisbon. So the answer is: Lisbon.", "answer_found": true}',
        ]
    )
    llm = ScriptedChatModel(
        replies={
            "bridge_name": NO_BRIDGE,
            "ircot_reason": lambda messages: next(thoughts),
            "generate_answer": cite("The Aurora lead, Maria Chen, was born in Lisbon.", "Lisbon"),
            "check_support": ALL_FULLY,
            "rewrite_query": "Where was Maria Chen born?",
        }
    )
    graph, _ = make_graph(llm, classifier=FixedClassifier("iterative"), graph=graph_settings)
    return run_turn(graph, "Where was the leader of the Aurora project born?"), llm.calls


def test_iterative_route_interleaves_reasoning_and_retrieval(make_graph) -> None:
    state, _ = run_aurora_question(make_graph, first_step_claims_answer=False)
    assert nodes_run(state)[:6] == [
        "start_turn",
        "route_question",
        "retrieve",
        "ircot_reason",
        "retrieve",
        "ircot_reason",
    ]
    assert state["queries_issued"][1] == "The Aurora project is led by Maria Chen."
    assert state["ircot_steps"] == 2 and state["reasoning_done"]
    assert [c["chunk_id"] for c in state["citations"]] == ["projects::c1"]


def test_ircot_goes_on_until_the_answer_is_stated_not_when_the_model_only_claims_it(make_graph) -> None:
    # The small model often claims the answer after the first hop of a bridge question.
    state, _ = run_aurora_question(make_graph, first_step_claims_answer=True)
    assert state["ircot_steps"] == 2 and state["reasoning"][-1].endswith("So the answer is: Lisbon.")
    first = [entry for entry in state["steps"] if entry["node"] == "ircot_reason"][0]["decision"]
    assert first["states_answer"] is False and "one more step" in first["note"]


def test_a_forced_route_overrides_the_classifier(make_graph) -> None:
    llm = ScriptedChatModel(replies={"generate_direct": "4"})
    graph, _ = make_graph(llm, classifier=FixedClassifier("iterative"))
    state = run_turn(graph, "What is 2 + 2?", route="direct")
    assert state["route"] == "direct" and state["route_confidence"] == 1.0
    assert step(state, "route_question")["reason"] == "route forced by the caller"


def test_an_unknown_forced_route_is_a_config_error(make_graph) -> None:
    graph, _ = make_graph(ScriptedChatModel())
    with pytest.raises(ConfigError, match="route_request"):
        run_turn(graph, "Hello", route="sideways")


def _after_a_retrieved_turn(make_graph, follow_up: str, rewrite: str) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver

    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
            "contextualize_question": rewrite,
            "generate_direct": "You're welcome!",
        }
    )
    graph, _ = make_graph(llm, classifier=FixedClassifier("direct", 0.99), checkpointer=InMemorySaver())
    run_turn(graph, "How many days of annual leave do employees get?", route="single", thread_id="t")
    return run_turn(graph, follow_up, thread_id="t")


def test_a_follow_up_question_in_a_conversation_from_the_documents_is_never_answered_from_memory(
    make_graph,
) -> None:
    # "At what temperature?" after a recipe answer went 'direct': "350°F", the document says 180 degrees.
    state = _after_a_retrieved_turn(
        make_graph, "And how many can be carried over?", "How many days carry over?"
    )
    assert state["route"] == "single" and "generate_direct" not in nodes_run(state)
    assert step(state, "route_question")["escalated"].startswith("a follow-up question")


def test_thanks_after_an_answer_stays_direct(make_graph) -> None:
    state = _after_a_retrieved_turn(make_graph, "Thanks a lot!", "Thanks a lot!")
    assert state["route"] == "direct" and state["answer"] == "You're welcome!"
