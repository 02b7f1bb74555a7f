"""The filter JSON form: what it accepts, what it turns into, and how it rejects malformed input.

What each operator selects in a real engine is in test_store_conformance.py; these tests pin the
parsing contract: every malformed input raises FilterError with the JSON path of the fault.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from qdrant_client import models

from core.errors import FilterError
from tools.knowledge_base.store.filters import (
    MAX_DEPTH,
    AndFilter,
    InCondition,
    MatchCondition,
    NotEqualCondition,
    OrFilter,
    RangeCondition,
    parse_filter,
    qdrant_key,
    restrict_to_groups,
    to_client,
    to_edge,
)


def test_no_filter_and_the_empty_object_mean_no_condition():
    assert parse_filter(None) is None
    assert parse_filter({}) is None
    assert parse_filter("{}") is None


def test_equality_of_strings_integers_and_booleans():
    parsed = parse_filter({"doc_id": "a", "metadata.year": 2020, "metadata.ok": True})
    assert parsed.conditions == [
        MatchCondition(field="doc_id", value="a"),
        MatchCondition(field="metadata.year", value=2020),
        MatchCondition(field="metadata.ok", value=True),
    ]
    assert type(parsed.conditions[2].value) is bool


def test_float_equality_becomes_a_closed_range():
    (condition,) = parse_filter({"metadata.score": 0.5}).conditions
    assert condition == RangeCondition(field="metadata.score", gte=0.5, lte=0.5)


def test_operators_of_one_field_are_anded_and_bounds_merge_into_one_range():
    (in_values, not_equal, bounds) = parse_filter(
        {"year": {"$in": [2019, 2020], "$ne": 2021, "$gte": 2000, "$lt": 2030.5}}
    ).conditions
    assert in_values == InCondition(field="year", values=[2019, 2020])
    assert not_equal == NotEqualCondition(field="year", value=2021)
    assert bounds == RangeCondition(field="year", gte=2000.0, lt=2030.5)


def test_iso_dates_make_a_datetime_range_and_naive_dates_are_utc():
    (condition,) = parse_filter(
        {"updated_at": {"$gte": "2024-01-01", "$lt": "2024-02-01T10:00:00+02:00"}}
    ).conditions
    assert condition.dates
    assert condition.gte == datetime(2024, 1, 1, tzinfo=UTC)
    assert condition.lt.astimezone(UTC) == datetime(2024, 2, 1, 8, tzinfo=UTC)


def test_and_or_nest():
    parsed = parse_filter({"$or": [{"a": 1}, {"$and": [{"b": "x"}, {"c": {"$ne": "y"}}]}]})
    (either,) = parsed.conditions
    assert isinstance(either, OrFilter)
    assert isinstance(either.conditions[1].conditions[0], AndFilter)


def test_json_text_is_accepted():
    assert parse_filter('{"kind": "chunk"}') == parse_filter({"kind": "chunk"})


MALFORMED = [
    ("[1, 2]", "$", "must be a JSON object"),
    ('{"a": ', "$", "not valid JSON"),
    ("a string", "$", "not valid JSON"),
    (["kind"], "$", "must be a JSON object, got array"),
    (42, "$", "got integer"),
    ({"$not": {"a": 1}}, "$.$not", "unknown operator"),
    ({"$in": [1]}, "$.$in", "go inside a field"),
    ({"year": {"$regex": "x"}}, "$.year.$regex", "unknown operator"),
    ({"year": {"gte": 2020}}, "$.year.gte", "operators start with '$'"),
    ({"year": {}}, "$.year", "empty operator object"),
    ({"year": None}, "$.year", "got null"),
    ({"acl": ["a", "b"]}, "$.acl", 'use {"$in"'),
    ({"year": {"a": 1}}, "$.year.a", "unknown operator"),
    ({"acl": {"$in": "public"}}, "$.acl.$in", "needs a list"),
    ({"acl": {"$in": []}}, "$.acl.$in", "at least one value"),
    ({"acl": {"$in": ["a", 1]}}, "$.acl.$in", "not a mix"),
    ({"acl": {"$in": [True]}}, "$.acl.$in[0]", "got boolean"),
    ({"acl": {"$in": [1.5]}}, "$.acl.$in[0]", "got number"),
    ({"acl": {"$ne": ["a"]}}, "$.acl.$ne", "got array"),
    ({"acl": {"$ne": 1.5}}, "$.acl.$ne", "got number"),
    ({"$and": []}, "$.$and", "at least one filter"),
    ({"$or": {"a": 1}}, "$.$or", "needs a list"),
    ({"$and": [{"a": 1}, 3]}, "$.$and[1]", "must be a JSON object"),
    ({"$or": [{"a": 1}, {}]}, "$.$or[1]", "would match everything"),
    ({"$and": [{"a": 1}, {"year": {"$gte": "last year"}}]}, "$.$and[1].year.$gte", "ISO 8601"),
    ({"year": {"$gt": True}}, "$.year.$gt", "got boolean"),
    ({"year": {"$lt": [2020]}}, "$.year.$lt", "got array"),
    ({"year": {"$gt": 2020, "$lt": "2024-01-01"}}, "$.year.$lt", "mixes numbers and dates"),
    ({"year": {"$gt": float("nan")}}, "$.year.$gt", "finite"),
    ({"": 1}, "$.", "empty field name"),
    ({"metadata..year": 1}, "$.metadata..year", "empty path segment"),
    ({'keys."x"': 1}, '$.keys."x"', "may not contain quotes"),
    ({"a[0]": 1}, "$.a[0]", "brackets"),
]


@pytest.mark.parametrize(("raw", "path", "reason"), MALFORMED, ids=[str(r) for r, _, _ in MALFORMED])
def test_malformed_input_raises_filter_error_with_its_json_path(raw, path, reason):
    with pytest.raises(FilterError) as caught:
        parse_filter(raw)
    assert caught.value.path == path
    assert reason in caught.value.reason
    assert path in str(caught.value)


def test_nesting_deeper_than_the_limit_is_rejected():
    fine: dict = {"a": 1}
    for _ in range(MAX_DEPTH - 1):
        fine = {"$and": [fine]}
    assert parse_filter(fine) is not None
    too_deep = {"$or": [fine]}
    with pytest.raises(FilterError, match=f"deeper than {MAX_DEPTH}"):
        parse_filter(too_deep)


def test_restrict_to_groups_ands_the_acl_clause_next_to_the_user_filter():
    restricted = restrict_to_groups({"$or": [{"acl": "finance"}, {"kind": "chunk"}]}, ["public"])
    assert restricted.conditions[-1] == InCondition(field="acl", values=["public"])
    assert isinstance(restricted.conditions[0], AndFilter)
    assert restrict_to_groups(None, ["a"]).conditions == [InCondition(field="acl", values=["a"])]


@pytest.mark.parametrize("groups", [[], [""], ["ok", ""]])
def test_restrict_to_groups_refuses_empty_groups(groups):
    with pytest.raises(FilterError, match="non-empty"):
        restrict_to_groups(None, groups)


def test_keys_with_spaces_or_punctuation_are_quoted_for_qdrant():
    assert qdrant_key("metadata.year") == "metadata.year"
    assert qdrant_key("keys.Order ID") == 'keys."Order ID"'
    assert qdrant_key("keys.订单号") == "keys.订单号"


def test_client_translation_builds_the_expected_qdrant_models():
    parsed = parse_filter(
        {"kind": "chunk", "acl": {"$in": ["a"]}, "doc_id": {"$ne": "x"}, "updated_at": {"$gte": "2024-01-01"}}
    )
    assert to_client(parsed) == models.Filter(
        must=[
            models.FieldCondition(key="kind", match=models.MatchValue(value="chunk")),
            models.FieldCondition(key="acl", match=models.MatchAny(any=["a"])),
            models.Filter(must_not=[models.FieldCondition(key="doc_id", match=models.MatchValue(value="x"))]),
            models.FieldCondition(
                key="updated_at", range=models.DatetimeRange(gte=datetime(2024, 1, 1, tzinfo=UTC))
            ),
        ]
    )


def test_edge_translation_keeps_booleans_boolean():
    # qdrant-edge turns a Python bool into an integer; the translation must hand it a real boolean.
    condition = to_edge(parse_filter({"committed": True})).must[0]
    assert condition.match.value is True
    assert to_edge(None) is None


@pytest.mark.parametrize(
    "raw",
    [
        {"metadata.year": 99999999999999999999999999999},
        {"metadata.year": {"$ne": -(2**63) - 1}},
        {"metadata.year": {"$in": [2024, 2**64]}},
        {"metadata.year": {"$gte": 10**400}},
    ],
)
def test_integers_beyond_64_bits_are_a_filter_error_not_an_engine_crash(raw):
    with pytest.raises(FilterError, match="out of range: filters take 64-bit integers"):
        parse_filter(raw)
