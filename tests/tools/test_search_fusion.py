"""The fusion formula and the request boundary of hybrid_search (no index needed)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import ConfigError, FilterError
from core.settings import SearchSettings
from tools.search import SearchRequest, access_filter, reciprocal_rank_fusion, require_groups


def test_rrf_scores_follow_the_formula_exactly():
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], k=60, weights=[2.0, 0.5]))
    assert fused["a"] == pytest.approx(2.0 / 61 + 0.5 / 62)
    assert fused["b"] == pytest.approx(2.0 / 62)
    assert fused["c"] == pytest.approx(2.0 / 63 + 0.5 / 61)


def test_rrf_k_flips_the_order_as_the_formula_says():
    # a: ranks 1 and 5; b: ranks 3 and 2. Small k rewards a single top rank, large k rewards agreement.
    dense = ["a", "x", "b", "y"]
    sparse = ["z", "b", "w", "v", "a"]
    small_k = [item for item, _ in reciprocal_rank_fusion([dense, sparse], k=1)]
    large_k = [item for item, _ in reciprocal_rank_fusion([dense, sparse], k=60)]
    assert 1 / 2 + 1 / 6 > 1 / 4 + 1 / 3 and small_k.index("a") < small_k.index("b")
    assert 1 / 61 + 1 / 65 < 1 / 63 + 1 / 62 and large_k.index("b") < large_k.index("a")


def test_rrf_weights_flip_the_order_as_the_formula_says():
    dense, sparse = ["a", "b"], ["b", "a"]
    dense_heavy = reciprocal_rank_fusion([dense, sparse], k=60, weights=[3.0, 1.0])
    sparse_heavy = reciprocal_rank_fusion([dense, sparse], k=60, weights=[1.0, 3.0])
    assert [i for i, _ in dense_heavy] == ["a", "b"]
    assert [i for i, _ in sparse_heavy] == ["b", "a"]


def test_rrf_zero_weight_removes_a_leg():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=10, weights=[1.0, 0.0])
    assert [i for i, _ in fused][:2] == ["a", "b"]
    assert dict(fused)["c"] == 0.0


def test_rrf_deduplicates_and_counts_an_item_once_per_list_at_its_best_rank():
    fused = dict(reciprocal_rank_fusion([["a", "b", "a"]], k=60))
    assert fused == {"a": pytest.approx(1 / 61), "b": pytest.approx(1 / 62)}


def test_rrf_ties_keep_first_appearance_order():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "a"]], k=60)
    assert [i for i, _ in fused] == ["a", "b"]
    assert fused[0][1] == pytest.approx(fused[1][1])


def test_rrf_rejects_mismatched_weights():
    with pytest.raises(ValueError, match="2 weights for 1 ranked lists"):
        reciprocal_rank_fusion([["a"]], k=60, weights=[1.0, 1.0])


def test_request_takes_unset_knobs_from_settings():
    defaults = SearchSettings(
        mode="sparse", top_k=7, leg_depth=33, rrf_k=20, dense_weight=0.5, sparse_weight=2
    )
    resolved = SearchRequest(queries=["q"], top_k=3).resolved(defaults)
    assert (resolved.mode, resolved.top_k, resolved.leg_depth, resolved.rrf_k) == ("sparse", 3, 33, 20)
    assert resolved.weights == (0.5, 2.0)
    assert resolved.include_kinds == ["chunk", "row", "sheet_summary"]


@pytest.mark.parametrize(
    "queries, message",
    [
        ([], "at least 1"),
        (["ok", "  "], "queries\\[1\\] is empty"),
        ([f"q{i}" for i in range(9)], "at most 8"),
    ],
)
def test_request_rejects_bad_query_lists(queries, message):
    with pytest.raises(ValidationError, match=message):
        SearchRequest(queries=queries)


def test_request_rejects_unknown_fields_such_as_groups():
    with pytest.raises(ValidationError, match="user_groups"):
        SearchRequest(queries=["q"], user_groups=["admin"])


def test_hybrid_with_both_weights_zero_is_a_config_error():
    with pytest.raises(ConfigError, match="dense_weight and search.sparse_weight"):
        SearchRequest(queries=["q"], dense_weight=0, sparse_weight=0).resolved(SearchSettings())


@pytest.mark.parametrize("groups", [[], None, [""], ["a", " "], "public"])
def test_missing_or_malformed_groups_are_an_error_never_no_filter(groups):
    with pytest.raises(ConfigError, match="user_groups"):
        require_groups(groups)


def test_access_filter_ands_the_acl_clause_beside_the_user_filter():
    user = {"$or": [{"acl": "B"}, {"doc_id": "x"}]}
    combined = access_filter(user, ["A"], ["chunk"])
    assert combined == {"$and": [user, {"kind": {"$in": ["chunk"]}}, {"acl": {"$in": ["A", "public"]}}]}


def test_access_filter_treats_an_empty_filter_as_no_condition():
    assert access_filter({}, ["A"], ["chunk"]) == {
        "$and": [{"kind": {"$in": ["chunk"]}}, {"acl": {"$in": ["A", "public"]}}]
    }


def test_every_caller_also_reads_public_documents():
    assert require_groups(["management"]) == ["management", "public"]
    assert require_groups(["public", "hr"]) == ["public", "hr"]


def test_access_filter_rejects_a_malformed_filter_with_its_path():
    with pytest.raises(FilterError) as info:
        access_filter({"$and": [{"year": {"$gte": 2020}}, {"year": {"$bogus": 1}}]}, ["A"], ["chunk"])
    assert info.value.path.startswith("$.$and[1]")
