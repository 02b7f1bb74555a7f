"""The retrieval tools as LangChain tools: schemas without identity, groups from the run config."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from core.settings import load_settings
from tests.fakes.tavily_server import FAKE_TAVILY_KEY, fake_tavily_server
from tests.tools.search_corpus import build_corpus
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.langchain_tools import make_tools
from tools.rerank.noop import NoopReranker
from tools.web_search.factory import get_web_search

BOARD_QUERY = "Zephyr Robotics acquisition forty million euros"
B_ONLY = {"board-minutes::c0", "board-minutes::c1", "security::c1", "order-lines::row::Lines::4"}


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    settings = build_corpus(tmp_path_factory.mktemp("tools") / "home", user_groups=["A"])
    with KnowledgeBase.open(settings) as opened:
        yield opened


@pytest.fixture(scope="module")
def tools(kb):
    return {t.name: t for t in make_tools(kb, kb.settings, reranker=NoopReranker())}


def call(tool, args: dict, groups: list[str] | None = None):
    """Invoke a tool the way an agent does (a tool call), with identity in the run config."""
    config = {"configurable": {"user_groups": groups}} if groups is not None else {}
    return tool.invoke({"type": "tool_call", "id": "call-1", "name": tool.name, "args": args}, config=config)


def test_the_four_tools_exist_with_schemas_that_carry_no_identity(tools):
    arguments = {
        name: set(tool.tool_call_schema.model_json_schema()["properties"]) for name, tool in tools.items()
    }
    assert arguments == {
        "hybrid_search": {"query", "queries", "mode", "top_k", "filter"},
        "rerank": {"query", "chunk_ids", "top_n"},
        "expand_context": {"chunk_ids"},
        "web_search": {"query", "max_results", "include_domains"},
    }


@pytest.mark.parametrize(
    "user_filter",
    [
        None,
        {"acl": "B"},
        {"acl": {"$in": ["A", "B"]}},
        {"$or": [{"acl": "B"}, {"doc_id": "board-minutes"}]},
        {"$or": [{"acl": {"$ne": "A"}}, {"kind": {"$in": ["chunk", "row"]}}]},
    ],
)
def test_a_filter_cannot_widen_the_callers_groups(tools, user_filter):
    args = {"queries": [BOARD_QUERY, "Zephyr server password"], "top_k": 50, "filter": user_filter}
    message = call(tools["hybrid_search"], args, groups=["A"])
    assert message.status == "success"
    assert not B_ONLY & {h.chunk_id for h in message.artifact}
    assert "Zephyr Robotics" not in message.content


def test_group_b_in_the_config_does_see_the_board_minutes(tools):
    message = call(tools["hybrid_search"], {"query": BOARD_QUERY, "top_k": 3}, groups=["B"])
    assert message.artifact[0].chunk_id == "board-minutes::c0"
    assert "board-minutes::c0" in message.content


def test_groups_fall_back_to_the_settings_when_the_config_has_none(tools):
    message = call(tools["hybrid_search"], {"query": BOARD_QUERY, "top_k": 50})
    hits = message.artifact
    assert hits and all("A" in h.chunk.acl for h in hits)


def test_identity_arguments_are_rejected(tools):
    with pytest.raises(ValidationError, match="user_groups"):
        call(tools["hybrid_search"], {"query": "vacation", "user_groups": ["B"]}, groups=["A"])


def test_a_malformed_filter_comes_back_as_a_tool_error_naming_the_path(tools):
    message = call(
        tools["hybrid_search"], {"query": "vacation", "filter": {"year": {"$near": 1}}}, groups=["A"]
    )
    assert message.status == "error"
    assert "invalid filter at $.year" in message.content


def test_a_search_needs_a_query(tools):
    with pytest.raises(ValidationError, match="give 'query' or 'queries'"):
        call(tools["hybrid_search"], {"top_k": 3}, groups=["A"])


def test_rerank_sees_only_chunks_the_caller_may_read(tools):
    args = {
        "query": "vacation",
        "chunk_ids": ["board-minutes::c0", "handbook::c0", "handbook::c2"],
        "top_n": 5,
    }
    message = call(tools["rerank"], args, groups=["A"])
    assert [h.chunk_id for h in message.artifact] == ["handbook::c0", "handbook::c2"]


def test_expand_context_expands_only_readable_chunks(tools):
    args = {"chunk_ids": ["board-minutes::c0", "security::c0", "handbook::c4"]}
    message = call(tools["expand_context"], args, groups=["A"])
    got = [h.chunk_id for h in message.artifact]
    assert not B_ONLY & set(got)
    assert {"security::c0", "handbook::c3", "handbook::c4", "handbook::c5"} <= set(got)


def test_web_search_reports_itself_unavailable_without_a_key(kb):
    web_tool = {t.name: t for t in make_tools(kb, kb.settings)}["web_search"]
    message = call(web_tool, {"query": "reciprocal rank fusion"}, groups=["A"])
    assert message.artifact == []
    assert message.content.startswith("web_search unavailable") and "TAVILY_API_KEY" in message.content


def test_web_search_returns_web_hits_from_the_configured_provider(kb):
    with fake_tavily_server() as server:
        settings = load_settings(
            home=kb.settings.home, tavily_api_key=FAKE_TAVILY_KEY, tavily_base_url=server.base_url,
            web={"timeout_s": 2.0, "max_retries": 0},
        )  # fmt: skip
        web_tool = {t.name: t for t in make_tools(kb, settings, web=get_web_search(settings))}["web_search"]
        message = call(web_tool, {"query": "reciprocal rank fusion", "max_results": 2}, groups=["A"])
    assert message.artifact and all(h.origin == "web" and h.url for h in message.artifact)
    assert "Reciprocal rank fusion" in message.content
