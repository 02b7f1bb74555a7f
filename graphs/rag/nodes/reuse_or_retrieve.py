"""Follow-ups about the same material: answer from the previous turn's context when it can answer them.

A follow-up that asks for something else or more ("what else…", "any others?", "还有吗？") or names a
year or ordinal the previous passages never mention ("and in 2024?") retrieves: the previous context is
exactly what it does not want. Otherwise the previous passages are reranked against the new standalone
question; when the best one scores above ``graph.crag_upper`` (the same bar as a 'correct' retrieval)
the turn reuses them instead of searching again. If that answer later proves not useful, the
usefulness loop retrieves afresh.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from core.errors import ProviderUnavailable
from graphs.rag.nodes._passages import renumber
from graphs.rag.nodes._question_facts import facts_of
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import ContextPassage, RagState
from tools.knowledge_base.records import Hit


def _as_hit(passage: ContextPassage) -> Hit:
    return Hit(
        chunk_id=passage["chunk_id"],
        doc_id=passage["doc_id"],
        text=passage["text"],
        score=0.0,
        source=passage["source"],
        title=passage["title"],
        url=passage["url"],
        origin=passage["origin"],
    )


@records_step
def reuse_or_retrieve(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    previous = list(state.get("previous_context") or [])
    question = state["standalone_question"]
    graph = resources.options.graph
    reranker = resources.reranker
    if not previous:
        return {
            "reused_previous_context": False,
            "decision": {"reuse": False, "reason": "no previous context"},
        }
    facts = facts_of(state)
    wants_more = facts.asks_for_more
    missing = [c for c in facts.constraints if not any(c in p["text"] for p in previous)]
    if wants_more or missing:
        reason = "asks for something else or more" if wants_more else f"asks about {', '.join(missing)}"
        return {
            "reused_previous_context": False,
            "decision": {"reuse": False, "reason": f"the follow-up {reason} than the previous passages hold"},
        }
    if not reranker.calibrated:
        return {
            "reused_previous_context": False,
            "decision": {
                "reuse": False,
                "reason": f"reranker '{reranker.name}' cannot score the previous context",
            },
        }
    try:
        scored = reranker.rerank(question, [_as_hit(p) for p in previous], len(previous))
    except ProviderUnavailable as exc:
        return {
            "reused_previous_context": False,
            "decision": {"reuse": False, "reason": f"reranker unavailable: {exc}"},
        }
    scores = {h.chunk_id: h.rerank_score or 0.0 for h in scored}
    best = max(scores.values(), default=0.0)
    reuse = best > graph.crag_upper
    decision: dict[str, Any] = {
        "reuse": reuse,
        "best_score": round(best, 4),
        "threshold": graph.crag_upper,
        "scores": {k: round(v, 4) for k, v in scores.items()},
    }
    if not reuse:
        return {"reused_previous_context": False, "decision": decision}
    kept = renumber([p for p in previous if scores.get(p["chunk_id"], 0.0) >= graph.crag_lower])
    decision["passages_reused"] = len(kept)
    return {"reused_previous_context": True, "context": kept, "decision": decision}
