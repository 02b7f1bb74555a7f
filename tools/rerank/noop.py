"""The pass-through reranker (``rerank.provider = "none"``): keeps the fusion order, cuts to top_n."""

from __future__ import annotations

from collections.abc import Sequence

from tools.knowledge_base.records import Hit
from tools.rerank.base import Reranker


class NoopReranker(Reranker):
    """Reorders nothing. ``rerank_score`` is set to the incoming (fusion) score so downstream code can
    rely on it; ``rerank.threshold`` is not applied, since fusion scores are on another scale."""

    name = "none"
    calibrated = False  # fusion scores: another scale, no thresholds apply

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        return [hit.model_copy(update={"rerank_score": hit.score}) for hit in list(hits)[: max(top_n, 0)]]
