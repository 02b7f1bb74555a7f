"""The retrieval tools as LangChain ``StructuredTool``s: hybrid_search, rerank, expand_context, web_search.

Identity never comes from tool arguments. The caller's ACL groups are read from the run's
``config["configurable"]["user_groups"]`` (falling back to ``settings.user_groups``), which LangChain
injects through the ``config`` parameter; argument schemas forbid unknown fields, so a model cannot
smuggle in groups. Each tool returns ``(content, artifact)``: a readable passage list for a model and
the typed ``list[Hit]`` for code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.errors import FilterError, ProviderUnavailable
from core.settings import Settings
from tools.expand_context import acl_clause, expand_context, is_readable
from tools.knowledge_base.records import Hit
from tools.knowledge_base.store.base import SearchMode
from tools.rerank.base import Reranker
from tools.search import MAX_QUERIES, SearchRequest, hybrid_search, require_groups
from tools.web_search.base import WebSearch

if TYPE_CHECKING:
    from tools.knowledge_base.knowledge_base import KnowledgeBase

SNIPPET_CHARS = 700


class HybridSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(default=None, description="one search query")
    queries: list[str] | None = Field(
        None, max_length=MAX_QUERIES, description="several phrasings or sub-questions, fused into one list"
    )
    mode: SearchMode | None = Field(
        default=None, description="dense, sparse (BM25) or hybrid; default from settings"
    )
    top_k: int | None = Field(default=None, ge=1, le=50, description="how many passages to return")
    filter: dict[str, Any] | None = Field(
        None,
        description='metadata filter, e.g. {"source": "a.md"}, {"metadata.year": {"$gte": 2020}}, '
        '{"$or": [...]}; operators $in $ne $gt $gte $lt $lte $and $or',
    )

    @model_validator(mode="after")
    def _one_query_at_least(self) -> HybridSearchArgs:
        if not self.query and not self.queries:
            raise ValueError("give 'query' or 'queries'")
        return self

    def all_queries(self) -> list[str]:
        return ([self.query] if self.query else []) + list(self.queries or [])


class RerankArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    chunk_ids: list[str] = Field(min_length=1, max_length=200, description="chunk ids from hybrid_search")
    top_n: int = Field(5, ge=1, le=50)


class ExpandContextArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_ids: list[str] = Field(
        min_length=1, max_length=50, description="chunk ids of the passages to expand"
    )


class WebSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    max_results: int | None = Field(default=None, ge=1, le=20)
    include_domains: list[str] = Field(default_factory=list)


def caller_groups(config: RunnableConfig | None, settings: Settings) -> list[str]:
    """The ACL groups of the run: ``configurable.user_groups``, else ``settings.user_groups``."""
    configurable = (config or {}).get("configurable") or {}
    groups = configurable.get("user_groups")
    return require_groups(settings.user_groups if groups is None else groups)


def format_hits(hits: list[Hit]) -> str:
    """Passages as a model reads them: numbered, with chunk id and source, text cut to a snippet."""
    if not hits:
        return "No passages found."
    lines = []
    for i, hit in enumerate(hits, start=1):
        where = hit.url or hit.source
        chunk = hit.chunk
        if chunk is not None and chunk.page_start is not None:
            where += f" p.{chunk.page_start}"
        if chunk is not None and chunk.sheet is not None:
            where += f" {chunk.sheet}:{chunk.row}"
        marker = "" if hit.is_direct else f" (context of {hit.expanded_from})"
        text = hit.text if len(hit.text) <= SNIPPET_CHARS else hit.text[:SNIPPET_CHARS] + "…"
        lines.append(f"[{i}] id={hit.chunk_id} | {hit.title} | {where}{marker}\n{text}")
    return "\n\n".join(lines)


def make_tools(
    kb: KnowledgeBase, settings: Settings, reranker: Reranker | None = None, web: WebSearch | None = None
) -> list[BaseTool]:
    """The four retrieval tools bound to one knowledge base. The reranker and web search default to
    the providers chosen by settings, created on first use."""
    providers: dict[str, Any] = {"reranker": reranker, "web": web}

    def get_reranker() -> Reranker:
        if providers["reranker"] is None:
            from tools.rerank.factory import get_reranker as build_reranker

            providers["reranker"] = build_reranker(settings)
        return providers["reranker"]

    def get_web() -> WebSearch:
        if providers["web"] is None:
            from tools.web_search.factory import get_web_search

            providers["web"] = get_web_search(settings)
        return providers["web"]

    def readable_hits(chunk_ids: list[str], groups: list[str]) -> list[Hit]:
        fetched = kb.store.fetch(list(dict.fromkeys(chunk_ids)), filter=acl_clause(groups))
        chunks = [c for c in fetched if is_readable(c, groups)]
        return [
            Hit(
                chunk_id=c.chunk_id,
                doc_id=c.doc_id,
                text=c.text,
                score=0.0,
                source=c.source,
                title=c.title,
                chunk=c,
            )
            for c in chunks
        ]

    def run_hybrid_search(config: RunnableConfig, **args: Any) -> tuple[str, list[Hit]]:
        parsed = HybridSearchArgs(**args)
        groups = caller_groups(config, settings)
        request = SearchRequest(
            queries=parsed.all_queries(), mode=parsed.mode, top_k=parsed.top_k, filter=parsed.filter
        )
        try:
            hits = hybrid_search(request, kb, groups)
        except FilterError as exc:
            raise ToolException(str(exc)) from exc
        return format_hits(hits), hits

    def run_rerank(config: RunnableConfig, **args: Any) -> tuple[str, list[Hit]]:
        parsed = RerankArgs(**args)
        hits = readable_hits(parsed.chunk_ids, caller_groups(config, settings))
        reranked = get_reranker().rerank(parsed.query, hits, parsed.top_n) if hits else []
        return format_hits(reranked), reranked

    def run_expand_context(config: RunnableConfig, **args: Any) -> tuple[str, list[Hit]]:
        parsed = ExpandContextArgs(**args)
        groups = caller_groups(config, settings)
        pieces = expand_context(readable_hits(parsed.chunk_ids, groups), kb, groups, settings.expand)
        return format_hits(pieces), pieces

    def run_web_search(config: RunnableConfig, **args: Any) -> tuple[str, list[Hit]]:
        parsed = WebSearchArgs(**args)
        try:
            hits = get_web().search(
                parsed.query,
                parsed.max_results or settings.web.max_results,
                parsed.include_domains or settings.web.include_domains,
            )
        except ProviderUnavailable as exc:
            # Reported, not raised: the graph falls back to the knowledge base alone.
            return f"web_search unavailable: {exc.reason}", []
        return format_hits(hits), hits

    specs: list[tuple[Callable[..., tuple[str, list[Hit]]], str, type[BaseModel], str]] = [
        (run_hybrid_search, "hybrid_search", HybridSearchArgs,
         "Search the knowledge base (dense + BM25 fused). Returns passages with their chunk ids."),
        (run_rerank, "rerank", RerankArgs,
         "Reorder passages (by chunk id) by relevance to a query; returns the best top_n."),
        (run_expand_context, "expand_context", ExpandContextArgs,
         "Add the surrounding context of passages (neighbouring chunks, parent section, linked table rows)."),
        (run_web_search, "web_search", WebSearchArgs,
         "Search the web (when configured). Use only when the knowledge base lacks the answer."),
    ]  # fmt: skip
    return [
        StructuredTool.from_function(
            func=func,
            name=name,
            description=description,
            args_schema=schema,
            response_format="content_and_artifact",
            handle_tool_error=True,
        )
        for func, name, schema, description in specs
    ]
