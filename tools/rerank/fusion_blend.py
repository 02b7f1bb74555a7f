"""A reranker whose order keeps part of the fused order it was given: reciprocal-rank fusion of the two
rankings, ``(1 - w) / (k + reranked rank) + w / (k + fused rank)``, with ``w = rerank.fusion_weight``.

Why: a learned reranker moves hits by what it learned on its training corpus. Where that transfers it
helps (HotpotQA-style passages, SciFact), where it does not it can undo a good fused order (measured on
held-out corpora in ``bench/retrieval_heldout.py``). Keeping the fused rank as a second voter bounds how
far one model can move a hit. The hits keep the inner reranker's ``rerank_score`` (a calibrated
probability that CRAG's thresholds read); only their order and cut change.
"""

from __future__ import annotations

from collections.abc import Sequence

from tools.knowledge_base.records import Hit
from tools.rerank.base import Reranker

RRF_K = 60


class FusionBlendReranker(Reranker):
    def __init__(self, inner: Reranker, fusion_weight: float) -> None:
        if not 0.0 <= fusion_weight <= 1.0:
            raise ValueError(f"fusion_weight must be within [0, 1], got {fusion_weight}")
        self.inner = inner
        self.fusion_weight = fusion_weight
        self.name = f"{inner.name}+fusion{fusion_weight:g}"
        self.calibrated = inner.calibrated

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        reranked = self.inner.rerank(query, hits, len(hits))
        fused_rank = {hit.chunk_id: rank for rank, hit in enumerate(hits, start=1)}
        w = self.fusion_weight

        def blended(pair: tuple[int, Hit]) -> float:
            rank, hit = pair
            return (1 - w) / (RRF_K + rank) + w / (RRF_K + fused_rank.get(hit.chunk_id, len(hits) + 1))

        ordered = sorted(enumerate(reranked, start=1), key=blended, reverse=True)
        return [hit for _, hit in ordered[: max(top_n, 0)]]
