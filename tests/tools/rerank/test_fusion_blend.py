"""rerank.fusion_weight: the final order is a reciprocal-rank fusion of the reranked and the fused order;
the hits keep the inner reranker's calibrated scores."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from core.settings import load_settings
from tools.knowledge_base.records import Hit
from tools.rerank.base import Reranker
from tools.rerank.factory import get_reranker
from tools.rerank.fusion_blend import FusionBlendReranker
from tools.rerank.offline import OfflineReranker


class ReverseReranker(Reranker):
    """Scores the fused list exactly backwards: the last fused hit becomes the best."""

    name = "reverse"

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        scored = [h.model_copy(update={"rerank_score": (i + 1) / len(hits)}) for i, h in enumerate(hits)]
        return list(reversed(scored))[:top_n]


def fused(n: int) -> list[Hit]:
    return [
        Hit(chunk_id=f"d{i}:0", doc_id=f"d{i}", text=f"passage {i}", score=1.0 / (60 + i)) for i in range(n)
    ]


def test_weight_zero_keeps_the_rerankers_order_and_one_keeps_the_fused_order() -> None:
    hits = fused(6)
    assert [h.chunk_id for h in FusionBlendReranker(ReverseReranker(), 0.0).rerank("q", hits, 6)] == [
        h.chunk_id for h in reversed(hits)
    ]
    assert [h.chunk_id for h in FusionBlendReranker(ReverseReranker(), 1.0).rerank("q", hits, 6)] == [
        h.chunk_id for h in hits
    ]


def test_a_blend_bounds_how_far_the_reranker_moves_a_hit_and_keeps_its_scores() -> None:
    hits = fused(10)
    blended = FusionBlendReranker(ReverseReranker(), 0.5).rerank("q", hits, 3)

    # Equal votes: the fused first and the reranked first (fused last) tie with their mirror images.
    assert len(blended) == 3 and {blended[0].chunk_id, blended[1].chunk_id} == {"d0:0", "d9:0"}
    assert all(h.rerank_score is not None for h in blended)  # the inner scores, for CRAG's thresholds
    by_id = {h.chunk_id: h.rerank_score for h in ReverseReranker().rerank("q", hits, 10)}
    assert all(h.rerank_score == by_id[h.chunk_id] for h in blended)


def test_the_factory_blends_the_offline_reranker_by_default_and_others_only_when_asked() -> None:
    plain = get_reranker(load_settings(rerank={"provider": "offline", "fusion_weight": 0}))
    blended = get_reranker(load_settings(rerank={"provider": "offline"}))
    untouched = get_reranker(load_settings(rerank={"provider": "none", "fusion_weight": 0.5}))

    assert isinstance(plain, OfflineReranker)
    assert isinstance(blended, FusionBlendReranker) and isinstance(blended.inner, OfflineReranker)
    assert untouched.name == "none"


def test_a_weight_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="fusion_weight"):
        FusionBlendReranker(ReverseReranker(), 1.5)
