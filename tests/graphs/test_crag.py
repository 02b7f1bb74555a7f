"""CRAG: the three grades from reranker scores, and what each one does (web search, retry, refusal).

Web search is the real Tavily provider talking HTTP to a fake Tavily service on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.settings import load_settings
from graphs.rag.nodes.grade_retrieval import crag_action, grade_passages
from tests.fakes.tavily_server import FAKE_TAVILY_KEY, WebPage, fake_tavily_server
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, cite, nodes_run, run_turn, step
from tools.web_search.base import WebSearch
from tools.web_search.factory import get_web_search

QUESTION = "How many days of annual leave do Northwind employees get?"
LEAVE_PAGE = WebPage(
    "https://example.org/northwind/leave",
    "Northwind leave policy",
    "Northwind employees get 25 days of annual leave, according to the company's careers page.",
)


@pytest.fixture
def tavily() -> Iterator[WebSearch]:
    with fake_tavily_server(pages=[LEAVE_PAGE]) as server:
        settings = load_settings(tavily_api_key=FAKE_TAVILY_KEY, tavily_base_url=server.base_url)
        yield get_web_search(settings)


def answering_llm() -> ScriptedChatModel:
    return ScriptedChatModel(
        replies={
            "generate_answer": cite("Northwind employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
            "rewrite_for_web": "Northwind annual leave days",
            "rewrite_query": "paid vacation days per year",
            "translate_query": "Northwind 员工有多少天年假？",
        }
    )


@pytest.mark.parametrize(
    ("scores", "grade"),
    [
        ([0.9, 0.1], "correct"),  # one passage above the upper threshold
        ([0.1, 0.2], "incorrect"),  # every passage below the lower threshold
        ([0.4, 0.1], "ambiguous"),  # in between
        ([], "incorrect"),  # nothing retrieved
        ([None, None], "ambiguous"),  # no calibrated scores
    ],
)
def test_grade_from_scores_and_thresholds(scores: list[float | None], grade: str) -> None:
    assert grade_passages(scores, upper=0.6, lower=0.25) == grade


def test_action_depends_on_web_availability_and_the_retry_counter() -> None:
    assert crag_action("correct", web_available=True, crag_retries=0, max_crag_retries=1) == "refine"
    assert (
        crag_action("ambiguous", web_available=True, crag_retries=0, max_crag_retries=1) == "refine_and_web"
    )
    assert crag_action("ambiguous", web_available=False, crag_retries=0, max_crag_retries=1) == "refine"
    assert crag_action("incorrect", web_available=True, crag_retries=0, max_crag_retries=1) == "web_search"
    assert crag_action("incorrect", web_available=False, crag_retries=0, max_crag_retries=1) == "retry_kb"
    assert crag_action("incorrect", web_available=False, crag_retries=1, max_crag_retries=1) == "refuse"


def test_correct_retrieval_is_refined_without_web_search(make_graph, tavily) -> None:
    reranker = ScriptedReranker({"handbook::c0": 0.9}, default=0.05)
    graph, _ = make_graph(answering_llm(), reranker=reranker, web=tavily)
    state = run_turn(graph, QUESTION, route="single")
    assert state["crag_grade"] == "correct" and state["crag_action"] == "refine"
    assert "web_search" not in nodes_run(state)
    # Passages scoring below crag_lower never reach the generator (IsRel).
    assert {p["chunk_id"] for p in state["context"]} <= {"handbook::c0", "handbook::c1"}
    assert step(state, "grade_retrieval")["dropped_as_irrelevant"] > 0


def test_ambiguous_retrieval_adds_web_results_to_the_knowledge_base_hits(make_graph, tavily) -> None:
    reranker = ScriptedReranker(default=0.4)
    graph, _ = make_graph(answering_llm(), reranker=reranker, web=tavily)
    state = run_turn(graph, QUESTION, route="single")
    assert state["crag_grade"] == "ambiguous" and state["crag_action"] == "refine_and_web"
    assert step(state, "web_search")["web_search"] == "used"
    origins = {p["origin"] for p in state["context"]}
    assert origins == {"kb", "web"}
    assert "Northwind annual leave days" in state["queries_issued"]


def test_incorrect_retrieval_is_replaced_by_web_results(make_graph, tavily) -> None:
    reranker = ScriptedReranker({LEAVE_PAGE.url: 0.7}, default=0.05)
    graph, _ = make_graph(answering_llm(), reranker=reranker, web=tavily)
    state = run_turn(graph, QUESTION, route="single")
    assert state["crag_grade"] == "incorrect" and state["crag_action"] == "web_search"
    [citation] = state["citations"]
    assert citation["origin"] == "web" and citation["url"] == LEAVE_PAGE.url
    assert not state["refused"]


def test_incorrect_retrieval_without_web_retries_the_knowledge_base_then_refuses(make_graph) -> None:
    llm = answering_llm()
    graph, _ = make_graph(
        llm,
        reranker=ScriptedReranker(default=0.05),
        web=None,
        graph={"max_crag_retries": 1, "retry_across_languages": True},
    )
    state = run_turn(graph, QUESTION, route="single")
    assert nodes_run(state) == [
        "start_turn",
        "route_question",
        "transform_query",
        "retrieve",
        "grade_retrieval",
        "crag_retry",
        "retrieve",
        "grade_retrieval",
        "refuse",
    ]
    # the knowledge base also holds Chinese: the retry searches with the question in Chinese too
    assert step(state, "retrieve")["queries"] == [
        "paid vacation days per year",
        "Northwind 员工有多少天年假？",
    ]
    assert state["refused"] and state["crag_retries"] == 1
    assert state["answer"] == "I could not find the answer to this in the available sources."
    assert "retrieval graded incorrect" in state["refusal_reason"]
    assert llm.prompts_called() == ["rewrite_query", "translate_query"]


def test_chinese_refusal_is_in_chinese(make_graph) -> None:
    llm = ScriptedChatModel(replies={"rewrite_query": "年假 天数"})
    graph, _ = make_graph(llm, reranker=ScriptedReranker(default=0.05), web=None)
    state = run_turn(graph, "公司的停车场几点关门？", route="single")
    assert state["refused"] and state["answer"] == "在现有资料中没有找到这个问题的答案。"


def test_when_the_web_finds_nothing_relevant_the_knowledge_base_is_retried_without_a_second_web_search(
    make_graph, tavily
) -> None:
    graph, _ = make_graph(answering_llm(), reranker=ScriptedReranker(default=0.05), web=tavily)
    state = run_turn(graph, QUESTION, route="single")
    assert nodes_run(state).count("web_search") == 1
    assert nodes_run(state)[-4:] == ["crag_retry", "retrieve", "grade_retrieval", "refuse"]
    assert step(state, "grade_retrieval")["web_search"] == "already used"
    assert state["crag_retries"] == 1 and state["refused"]
