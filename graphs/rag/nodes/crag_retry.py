"""CRAG graded retrieval incorrect and there is no web search: a rewritten query, the knowledge base again."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite

from graphs.rag.nodes._rewrite import retry_queries
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState


@records_step
def crag_retry(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """Retrieval was graded incorrect and there is no web search: try the knowledge base once more."""
    counter = state.get("crag_retries", 0) + 1
    queries = retry_queries(state, config, resources, "the search found no relevant passage")
    return {
        "crag_retries": counter,
        "queries": queries,
        "hits": Overwrite([]),
        "decision": {
            "retry": "crag",
            "counter": counter,
            "bound": resources.options.graph.max_crag_retries,
            "queries": queries,
        },
    }
