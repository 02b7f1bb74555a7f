"""The reranker interface: reorder hits by relevance to one query."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from tools.knowledge_base.records import Hit


class Reranker(ABC):
    name: str
    #: Whether ``rerank_score`` is a relevance probability that CRAG's thresholds apply to.
    calibrated: bool = True

    @abstractmethod
    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        """Return at most ``top_n`` hits, best first, each with ``rerank_score`` set and ``score`` updated.

        Implementations truncate the passage (never the query) to the model's input window. Raises
        ``ProviderUnavailable`` when a hosted provider fails after its retries.
        """


def rerank_for_queries(
    reranker: Reranker, queries: Sequence[str], hits: Sequence[Hit], top_n: int
) -> list[Hit]:
    """Rerank ``hits`` against each of ``queries`` and keep each passage's best score, best first.

    One query is one ``rerank``. Several are the same question in different languages: a passage in
    the other language than the question scores low against it (no shared words), so each passage is
    judged against the wording that fits it."""
    if len(queries) == 1:
        return reranker.rerank(queries[0], hits, top_n)
    best: dict[str, Hit] = {}
    for query in queries:
        for hit in reranker.rerank(query, hits, len(hits)):
            kept = best.get(hit.chunk_id)
            if kept is None or _relevance(hit) > _relevance(kept):
                best[hit.chunk_id] = hit
    return sorted(best.values(), key=_relevance, reverse=True)[:top_n]


def _relevance(hit: Hit) -> float:
    return hit.rerank_score if hit.rerank_score is not None else hit.score
