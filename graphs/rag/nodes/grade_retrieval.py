"""CRAG's retrieval evaluator, from the reranker's scores: no LLM call per passage.

correct   : some passage scores above ``graph.crag_upper``      → refine the passages
incorrect : every passage scores below ``graph.crag_lower``     → web search; without web, retry the
                                                                  knowledge base with a rewritten query
                                                                  (``graph.max_crag_retries``), then refuse
ambiguous : otherwise                                           → refine, plus web search when available

Passages below ``crag_lower`` are dropped here (Self-RAG's IsRel: they never reach the prompt), except
the best ``graph.crag_min_kept`` of a retrieval not graded 'incorrect': a question about two things
("were A and B of the same nationality?") scores B's passage lower than A's, yet needs both.
A pass-through reranker ('none') gives fusion scores on another scale, so every grade is 'ambiguous'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite

from graphs.rag.nodes._passages import hits_from_state, hits_to_state
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import CragAction, CragGrade, RagState
from tools.knowledge_base.records import Hit


def grade_passages(scores: Sequence[float | None], upper: float, lower: float) -> CragGrade:
    """The CRAG verdict for one retrieval from its passages' relevance scores (None = unscored)."""
    known = [s for s in scores if s is not None]
    if not known:
        return "incorrect" if not scores else "ambiguous"
    if any(s > upper for s in known):
        return "correct"
    if all(s < lower for s in known) and len(known) == len(scores):
        return "incorrect"
    return "ambiguous"


def crag_action(
    grade: CragGrade, web_available: bool, crag_retries: int, max_crag_retries: int
) -> CragAction:
    """What to do about a grade, given whether web search exists and the retry counter."""
    if grade == "correct":
        return "refine"
    if grade == "ambiguous":
        return "refine_and_web" if web_available else "refine"
    if web_available:
        return "web_search"
    return "retry_kb" if crag_retries < max_crag_retries else "refuse"


def kept_passages(
    hits: Sequence[Hit], scores: Sequence[float | None], lower: float, min_kept: int
) -> list[Hit]:
    """Hits scoring at least ``lower`` (or unscored), plus the ``min_kept`` best-scored, in hit order."""
    by_score = sorted(range(len(hits)), key=lambda i: -(scores[i] or 0.0))
    floor = set(by_score[:min_kept])
    return [
        h for i, (h, s) in enumerate(zip(hits, scores, strict=True)) if s is None or s >= lower or i in floor
    ]


@records_step
def grade_retrieval(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    settings = resources.options.graph
    hits = hits_from_state(state.get("hits") or [])
    calibrated = resources.reranker.calibrated
    scores = [h.rerank_score if calibrated else None for h in hits]
    grade = grade_passages(scores, settings.crag_upper, settings.crag_lower)
    # A second grading in the same turn (after a knowledge-base retry) does not search the web again.
    web_available = resources.web is not None and not state.get("web_searched")
    retries = state.get("crag_retries", 0)
    action = crag_action(grade, web_available, retries, settings.max_crag_retries)
    kept = kept_passages(
        hits, scores, settings.crag_lower, 0 if grade == "incorrect" else settings.crag_min_kept
    )
    decision: dict[str, Any] = {
        "grade": grade,
        "action": action,
        "thresholds": {"upper": settings.crag_upper, "lower": settings.crag_lower},
        "scores": {
            h.chunk_id: (round(s, 4) if s is not None else None) for h, s in zip(hits, scores, strict=True)
        },
        "kept": len(kept),
        "dropped_as_irrelevant": len(hits) - len(kept),
        "web_search": "available"
        if web_available
        else ("already used" if state.get("web_searched") else "unavailable"),
        "crag_retries": {"counter": retries, "bound": settings.max_crag_retries},
    }
    if not calibrated:
        decision["note"] = "reranker 'none' gives uncalibrated fusion scores: graded ambiguous"
    return {
        "crag_grade": grade,
        "crag_action": action,
        "hits": Overwrite(hits_to_state(kept)),
        "decision": decision,
    }
