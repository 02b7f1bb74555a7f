"""CRAG's web branch: rewrite the question for a web engine, search, rerank the results.

Used when retrieval was graded incorrect (web replaces the knowledge base hits) or ambiguous (web
results are added to them). A provider failure is recorded, never raised: the graph falls back.
"""

from __future__ import annotations

import contextlib
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite

from core.errors import ProviderUnavailable
from graphs.rag.nodes._llm import ask_text, one_line
from graphs.rag.nodes._passages import hits_from_state, hits_to_state
from graphs.rag.nodes._step import records_step
from graphs.rag.nodes.retrieve import describe_hit
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt


@records_step
def web_search(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    question = state["standalone_question"]
    web = resources.web
    if web is None:
        return {"decision": {"web_search": "unavailable", "results": 0}}
    query = (
        one_line(ask_text(resources.llm, load_prompt("rewrite_for_web"), f"Question: {question}", config))
        or question
    )
    options = resources.options
    try:
        results = web.search(query, options.web_max_results, options.web_include_domains)
    except ProviderUnavailable as exc:
        return {
            "web_searched": True,
            "queries_issued": [query],
            "decision": {"web_search": f"failed: {exc}", "query": query, "results": 0},
        }
    # A failing reranker keeps the engine's order; the generator's checks still judge the results.
    with contextlib.suppress(ProviderUnavailable):
        results = resources.reranker.rerank(question, results, len(results))
    lower = resources.options.graph.crag_lower
    calibrated = resources.reranker.calibrated
    relevant = [h for h in results if not calibrated or h.rerank_score is None or h.rerank_score >= lower]
    replace = state.get("crag_action") == "web_search"
    kb_hits = [] if replace else hits_from_state(state.get("hits") or [])
    return {
        "web_searched": True,
        "hits": Overwrite(hits_to_state([*kb_hits, *relevant])),
        "queries_issued": [query],
        "decision": {
            "web_search": "used",
            "provider": web.name,
            "query": query,
            "results": len(results),
            "kept": [describe_hit(h) for h in relevant],
            "merged_with_kb_hits": not replace,
        },
    }
