"""Context expansion around the kept hits: neighbours, parents, linked rows (``expand_context``)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.rag.nodes._passages import hits_from_state, hits_to_state
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.run_context import RunContext, run_context
from graphs.rag.state import RagState


@records_step
def expand_context(
    state: RagState, config: RunnableConfig, *, resources: Resources, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Expand knowledge-base hits in document order; web hits pass through unchanged."""
    groups = run_context(runtime, config).groups(resources.options)
    hits = hits_from_state(state.get("hits") or [])
    kb_hits = [h for h in hits if h.origin == "kb"]
    web_hits = [h for h in hits if h.origin == "web"]
    expanded = resources.expand(kb_hits, groups) if kb_hits else []
    expanded = [h for h in expanded if h.origin == "kb"] + web_hits
    added = [h for h in expanded if not h.is_direct]
    return {
        "passages": hits_to_state(expanded),
        "decision": {
            "seed_hits": len(kb_hits),
            "web_hits": len(web_hits),
            "pieces": len(expanded),
            "expanded": [{"chunk_id": h.chunk_id, "around": h.expanded_from} for h in added],
        },
    }
