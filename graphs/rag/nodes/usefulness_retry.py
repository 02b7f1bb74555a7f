"""IsUse failed (or the passages held no answer): a rewritten query and a fresh retrieval."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._rewrite import retry_queries
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState, turn_defaults


@records_step
def usefulness_retry(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """The answer did not address the question (IsUse), or the passages held no answer: search again."""
    counter = state.get("usefulness_retries", 0) + 1
    why = (
        "the passages found did not contain the answer"
        if state.get("generator_refused")
        else "the answer written from the passages found did not address the question"
    )
    queries = retry_queries(state, config, resources, why)
    narrow = (
        bool(state.get("generator_refused")) and resources.options.graph.narrow_after_not_found is not None
    )
    return {
        **turn_defaults(retrieval_only=True),
        "narrow_context": narrow,
        "usefulness_retries": counter,
        "queries": queries,
        "decision": {
            "retry": "usefulness",
            "reason": why,
            "counter": counter,
            "bound": resources.options.graph.max_usefulness_retries,
            "queries": queries,
            "narrow_context": narrow,
        },
    }
