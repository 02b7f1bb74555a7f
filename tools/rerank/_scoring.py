"""Helpers every reranker shares: what text a hit is judged by, and how scores become ordered hits."""

from __future__ import annotations

from collections.abc import Sequence

from tools.knowledge_base.records import Hit


def passage_text(hit: Hit) -> str:
    """The text a reranker judges: the chunk's indexed text (title and headings prefixed) when known,
    else the title and text of the hit (web results)."""
    if hit.chunk is not None:
        return hit.chunk.index_text()
    return "\n".join(part for part in (hit.title, hit.text) if part)


def order_by_scores(
    hits: Sequence[Hit], scores: Sequence[float], top_n: int, threshold: float | None
) -> list[Hit]:
    """Hits sorted by ``scores`` (best first; ties keep the incoming order), those below ``threshold``
    dropped, cut to ``top_n``; each copy has ``rerank_score`` and ``score`` set to its score."""
    if len(hits) != len(scores):
        raise ValueError(f"{len(scores)} scores for {len(hits)} hits")
    ranked = sorted(zip(hits, scores, strict=True), key=lambda pair: -pair[1])
    kept = [(hit, s) for hit, s in ranked if threshold is None or s >= threshold]
    return [hit.model_copy(update={"rerank_score": s, "score": s}) for hit, s in kept[: max(top_n, 0)]]
