"""Metadata filters: the documented JSON form → a validated AST → Qdrant filters for both engines.

JSON form (docs/architecture.md):
    {"field": value}                                  equality (string, integer, boolean; a float means
                                                      an exact numeric range)
    {"field": {"$in": [v, ...]}}                      any of several strings or integers
    {"field": {"$ne": v}}                             not equal (a point without the field matches)
    {"field": {"$gt"|"$gte"|"$lt"|"$lte": x}}         x a number or an ISO 8601 date/datetime
    {"$and": [f, ...]}, {"$or": [f, ...]}              non-empty lists of filters
Several keys in one object are ANDed; several operators on one field too.

Every malformed input raises ``FilterError(path, reason)`` with a JSON path such as
``$.$and[1].year.$gte``; nothing malformed is ever dropped, so bad input can never widen a search to
everything. Only ``None`` or ``{}`` mean "no condition".
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from core.errors import FilterError

MAX_DEPTH = 8
RANGE_OPERATORS = ("$gt", "$gte", "$lt", "$lte")
FIELD_OPERATORS = ("$in", "$ne", *RANGE_OPERATORS)
LOGICAL_OPERATORS = ("$and", "$or")

Scalar = str | int | bool

# A path segment that Qdrant's key parser takes bare; anything else is quoted.
_PLAIN_SEGMENT = re.compile(r"^[\w\-]+$")


class MatchCondition(BaseModel):
    op: Literal["eq"] = "eq"
    field: str
    value: Scalar


class InCondition(BaseModel):
    op: Literal["in"] = "in"
    field: str
    values: list[str] | list[int]


class NotEqualCondition(BaseModel):
    op: Literal["ne"] = "ne"
    field: str
    value: Scalar


class RangeCondition(BaseModel):
    """Bounds are numbers, or (``dates=True``) timezone-aware datetimes."""

    op: Literal["range"] = "range"
    field: str
    dates: bool = False
    gt: float | datetime | None = None
    gte: float | datetime | None = None
    lt: float | datetime | None = None
    lte: float | datetime | None = None


class AndFilter(BaseModel):
    op: Literal["and"] = "and"
    conditions: list[FilterNode] = Field(default_factory=list)


class OrFilter(BaseModel):
    op: Literal["or"] = "or"
    conditions: list[FilterNode]


FilterNode = Annotated[
    MatchCondition | InCondition | NotEqualCondition | RangeCondition | AndFilter | OrFilter,
    Field(discriminator="op"),
]
AndFilter.model_rebuild()
OrFilter.model_rebuild()


# ---------------------------------------------------------------------------------------------- parsing


def parse_filter(raw: str | dict[str, Any] | AndFilter | None) -> AndFilter | None:
    """Validate a filter given as JSON text or a parsed object; ``None`` when there is no condition.

    Raises ``FilterError`` naming the JSON path and what is wrong.
    """
    if raw is None or isinstance(raw, AndFilter):
        return raw if raw is None or raw.conditions else None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FilterError(
                "$", f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from exc
    node = _parse_object(raw, "$", depth=1)
    return node if node.conditions else None


def restrict_to_groups(raw: str | dict[str, Any] | AndFilter | None, groups: list[str]) -> AndFilter:
    """``raw`` ANDed with ``{"acl": {"$in": groups}}``: the access-control clause no filter can lift."""
    if not groups or not all(isinstance(g, str) and g for g in groups):
        raise FilterError("$.acl.$in", "the caller's ACL groups must be a non-empty list of names")
    acl = InCondition(field="acl", values=list(groups))
    user = parse_filter(raw)
    return AndFilter(conditions=[user, acl] if user else [acl])


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
    }.get(type(value), type(value).__name__)


def _parse_object(raw: Any, path: str, depth: int) -> AndFilter:
    if depth > MAX_DEPTH:
        raise FilterError(path, f"filter nested deeper than {MAX_DEPTH} levels")
    if not isinstance(raw, dict):
        raise FilterError(path, f"a filter must be a JSON object, got {_type_name(raw)}")
    conditions: list[Any] = []
    for key, value in raw.items():
        key_path = f"{path}.{key}"
        if not isinstance(key, str) or not key:
            raise FilterError(key_path, "empty field name")
        if key.startswith("$"):
            if key not in LOGICAL_OPERATORS:
                raise FilterError(
                    key_path,
                    f"unknown operator {key!r} at this level (use $and or $or; field operators "
                    f"{', '.join(FIELD_OPERATORS)} go inside a field)",
                )
            if not isinstance(value, list):
                raise FilterError(key_path, f"{key} needs a list of filters, got {_type_name(value)}")
            if not value:
                raise FilterError(key_path, f"{key} needs at least one filter, got an empty list")
            children: list[FilterNode] = []
            for i, item in enumerate(value):
                child = _parse_object(item, f"{key_path}[{i}]", depth + 1)
                if not child.conditions:
                    raise FilterError(
                        f"{key_path}[{i}]", f"an empty filter {{}} inside {key} would match everything"
                    )
                children.append(child)
            conditions.append(
                AndFilter(conditions=children) if key == "$and" else OrFilter(conditions=children)
            )
        else:
            conditions.extend(_parse_field(key, value, key_path))
    return AndFilter(conditions=conditions)


def _check_field_name(field: str, path: str) -> None:
    segments = field.split(".")
    if any(not s.strip() for s in segments):
        raise FilterError(path, f"field name {field!r} has an empty path segment")
    for segment in segments:
        if any(c in segment for c in '"[]$') or segment != segment.strip():
            raise FilterError(
                path,
                f"field name {field!r}: segment {segment!r} may not contain quotes, "
                "brackets, '$' or surrounding spaces",
            )


def _parse_field(field: str, value: Any, path: str) -> list[Any]:
    _check_field_name(field, path)
    if isinstance(value, dict):
        return _parse_operators(field, value, path)
    return [_equality(field, value, path)]


# The store keeps integers as signed 64-bit: a larger one could never match, and the engine rejects it.
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _check_integer(value: Any, path: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and not _INT64_MIN <= value <= _INT64_MAX:
        raise FilterError(path, f"integer {value} is out of range: filters take 64-bit integers")


def _equality(field: str, value: Any, path: str) -> MatchCondition | RangeCondition:
    if isinstance(value, bool | str | int):
        _check_integer(value, path)
        return MatchCondition(field=field, value=value)
    if isinstance(value, float):
        # Qdrant matches only keywords, integers and booleans exactly; a float is a closed range.
        return RangeCondition(field=field, gte=value, lte=value)
    if isinstance(value, list):
        raise FilterError(path, 'equality takes one value; to match any of several use {"$in": [...]}')
    raise FilterError(path, f"equality needs a string, number or boolean, got {_type_name(value)}")


def _parse_operators(field: str, ops: dict[str, Any], path: str) -> list[Any]:
    if not ops:
        raise FilterError(
            path, "an empty operator object; use a value for equality or one of " + ", ".join(FIELD_OPERATORS)
        )
    out: list[Any] = []
    bounds: dict[str, Any] = {}
    for op, value in ops.items():
        op_path = f"{path}.{op}"
        if op not in FIELD_OPERATORS:
            hint = (
                " (operators start with '$')" if isinstance(op, str) and f"${op}" in FIELD_OPERATORS else ""
            )
            raise FilterError(
                op_path, f"unknown operator {op!r}{hint}; supported: {', '.join(FIELD_OPERATORS)}"
            )
        if op == "$in":
            out.append(_in_condition(field, value, op_path))
        elif op == "$ne":
            if isinstance(value, float) or not isinstance(value, bool | str | int):
                raise FilterError(op_path, f"$ne needs a string, integer or boolean, got {_type_name(value)}")
            _check_integer(value, op_path)
            out.append(NotEqualCondition(field=field, value=value))
        else:
            bounds[op] = (value, op_path)
    if bounds:
        out.append(_range_condition(field, bounds))
    return out


def _in_condition(field: str, values: Any, path: str) -> InCondition:
    if not isinstance(values, list):
        raise FilterError(path, f"$in needs a list of values, got {_type_name(values)}")
    if not values:
        raise FilterError(path, "$in needs at least one value, got an empty list")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, str | int):
            raise FilterError(f"{path}[{i}]", f"$in takes strings or integers, got {_type_name(v)}")
        _check_integer(v, f"{path}[{i}]")
    if len({type(v) for v in values}) > 1:
        raise FilterError(path, "$in values must be all strings or all integers, not a mix")
    return InCondition(field=field, values=values)


def _parse_date(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _range_condition(field: str, bounds: dict[str, tuple[Any, str]]) -> RangeCondition:
    kinds: dict[str, str] = {}
    parsed: dict[str, float | datetime] = {}
    for op, (value, op_path) in bounds.items():
        if isinstance(value, bool):
            raise FilterError(op_path, f"{op} needs a number or an ISO 8601 date, got boolean")
        if isinstance(value, int | float):
            _check_integer(value, op_path)
            if not np.isfinite(value):
                raise FilterError(op_path, f"{op} needs a finite number")
            parsed[op[1:]] = float(value)
            kinds[op] = "number"
        elif isinstance(value, str):
            moment = _parse_date(value)
            if moment is None:
                raise FilterError(
                    op_path,
                    f"{op} on a string needs an ISO 8601 date such as 2024-05-31 or "
                    f"2024-05-31T12:00:00Z, got {value!r}",
                )
            parsed[op[1:]] = moment
            kinds[op] = "date"
        else:
            raise FilterError(op_path, f"{op} needs a number or an ISO 8601 date, got {_type_name(value)}")
    if len(set(kinds.values())) > 1:
        last_op = list(bounds)[-1]
        raise FilterError(bounds[last_op][1], "a range mixes numbers and dates on one field")
    return RangeCondition(
        field=field,
        dates="date" in kinds.values(),
        gt=parsed.get("gt"),
        gte=parsed.get("gte"),
        lt=parsed.get("lt"),
        lte=parsed.get("lte"),
    )


# ------------------------------------------------------------------------------------------ translation


def qdrant_key(field: str) -> str:
    """The field as a Qdrant payload key, quoting segments with spaces or punctuation (``keys."Order ID"``)."""
    return ".".join(s if _PLAIN_SEGMENT.match(s) else f'"{s}"' for s in field.split("."))


def _num(bound: float | datetime | None) -> float | None:
    assert bound is None or isinstance(bound, float), "a numeric range holds numbers"
    return bound


def _when(bound: float | datetime | None) -> datetime | None:
    assert bound is None or isinstance(bound, datetime), "a date range holds datetimes"
    return bound


def _iso(bound: float | datetime | None) -> str | None:
    moment = _when(bound)
    return None if moment is None else moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def to_edge(node: AndFilter | None) -> Any:
    """The AST as a ``qdrant_edge.Filter`` (``None`` for no condition)."""
    if node is None:
        return None
    return _edge_node(node)


def _edge_value(value: Scalar) -> Any:
    # qdrant-edge 0.9 converts a Python bool to an integer (so `True` never matches a stored boolean);
    # numpy's bool survives the conversion as a boolean.
    return np.bool_(value) if isinstance(value, bool) else value


def _edge_node(node: Any) -> Any:
    import qdrant_edge as qe

    if isinstance(node, AndFilter):
        return qe.Filter(must=[_edge_node(c) for c in node.conditions])
    if isinstance(node, OrFilter):
        return qe.Filter(should=[_edge_node(c) for c in node.conditions])
    key = qdrant_key(node.field)
    if isinstance(node, MatchCondition):
        return qe.FieldCondition(key=key, match=qe.MatchValue(_edge_value(node.value)))
    if isinstance(node, NotEqualCondition):
        return qe.Filter(must_not=[qe.FieldCondition(key=key, match=qe.MatchValue(_edge_value(node.value)))])
    if isinstance(node, InCondition):
        return qe.FieldCondition(key=key, match=qe.MatchAny(node.values))
    if isinstance(node, RangeCondition):
        if node.dates:
            dates = qe.RangeDateTime(
                gt=_iso(node.gt), gte=_iso(node.gte), lt=_iso(node.lt), lte=_iso(node.lte)
            )
            return qe.FieldCondition(key=key, range=dates)
        numbers = qe.RangeFloat(gt=_num(node.gt), gte=_num(node.gte), lt=_num(node.lt), lte=_num(node.lte))
        return qe.FieldCondition(key=key, range=numbers)
    raise TypeError(f"not a filter node: {node!r}")


def to_client(node: AndFilter | None) -> Any:
    """The AST as a ``qdrant_client.models.Filter`` (``None`` for no condition)."""
    if node is None:
        return None
    return _client_node(node)


def _client_node(node: Any) -> Any:
    from qdrant_client import models

    if isinstance(node, AndFilter):
        return models.Filter(must=[_client_node(c) for c in node.conditions])
    if isinstance(node, OrFilter):
        return models.Filter(should=[_client_node(c) for c in node.conditions])
    key = qdrant_key(node.field)
    if isinstance(node, MatchCondition):
        return models.FieldCondition(key=key, match=models.MatchValue(value=node.value))
    if isinstance(node, NotEqualCondition):
        return models.Filter(
            must_not=[models.FieldCondition(key=key, match=models.MatchValue(value=node.value))]
        )
    if isinstance(node, InCondition):
        return models.FieldCondition(key=key, match=models.MatchAny(any=node.values))
    if isinstance(node, RangeCondition):
        if node.dates:
            dates = models.DatetimeRange(
                gt=_when(node.gt), gte=_when(node.gte), lt=_when(node.lt), lte=_when(node.lte)
            )
            return models.FieldCondition(key=key, range=dates)
        numbers = models.Range(gt=_num(node.gt), gte=_num(node.gte), lt=_num(node.lt), lte=_num(node.lte))
        return models.FieldCondition(key=key, range=numbers)
    raise TypeError(f"not a filter node: {node!r}")
