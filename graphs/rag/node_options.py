"""The settings values the graph's nodes read, and nothing more: no keys, no endpoints, no paths.

``Resources`` builds it once from ``Settings`` (it is the graph's factory); a node reads
``resources.options`` and never the whole ``Settings``, so what a node depends on is written here.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.settings import GraphSettings, Settings


@dataclass(frozen=True)
class NodeOptions:
    graph: GraphSettings  # the loops' bounds, CRAG's thresholds, the answer gate, per-run defaults
    default_groups: tuple[str, ...]  # a run's ACL groups when its config names none
    history_turns: int  # earlier turns the rewrite of a follow-up reads
    search_top_k: int
    rerank_candidates: int  # hits fetched for the reranker to choose from
    max_context_tokens: int  # the refined context's size
    web_max_results: int
    web_include_domains: tuple[str, ...]

    @classmethod
    def from_settings(cls, settings: Settings) -> NodeOptions:
        return cls(
            graph=settings.graph,
            default_groups=tuple(settings.user_groups),
            history_turns=settings.chat.history_turns,
            search_top_k=settings.search.top_k,
            rerank_candidates=settings.rerank.candidates,
            max_context_tokens=settings.expand.max_context_tokens,
            web_max_results=settings.web.max_results,
            web_include_domains=tuple(settings.web.include_domains),
        )
