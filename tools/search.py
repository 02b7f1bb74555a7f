"""Hybrid search over the knowledge base: dense + BM25 legs fused with weighted RRF, filters, ACL.

``score(d) = Σ wᵢ / (k + rankᵢ(d))`` (seeds 000 and 001): the two legs of one query are fused inside the
engine (one Qdrant query with two prefetches); several queries (multi-query, decomposition) are then
fused here with the same formula over their fused lists, de-duplicated by chunk id.

Access control is not optional: every query ANDs ``{"acl": {"$in": groups}}`` into the filter, where
``groups`` is the caller's identity (from the run configuration, never from tool arguments). Empty
groups are an error, never "no filter".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.errors import ConfigError
from core.settings import SearchSettings
from tools.knowledge_base.records import ChunkKind, Hit, LegScore
from tools.knowledge_base.sparse import SparseVec
from tools.knowledge_base.store.base import SearchMode, StoredHit
from tools.knowledge_base.store.filters import parse_filter

if TYPE_CHECKING:
    from tools.knowledge_base.knowledge_base import KnowledgeBase

MAX_QUERIES = 8
DEFAULT_KINDS: tuple[ChunkKind, ...] = ("chunk", "row", "sheet_summary")


class SearchRequest(BaseModel):
    """One search: up to 8 query strings and how to run them. ``None`` fields take ``settings.search``."""

    model_config = ConfigDict(extra="forbid")

    queries: list[str] = Field(min_length=1, max_length=MAX_QUERIES)
    mode: SearchMode | None = None
    top_k: int | None = Field(default=None, ge=1, le=1000)
    filter: dict[str, Any] | None = Field(
        default=None, description="metadata filter in the JSON form of docs/architecture.md"
    )
    rrf_k: int | None = Field(default=None, ge=1, le=10_000)
    dense_weight: float | None = Field(default=None, ge=0.0)
    sparse_weight: float | None = Field(default=None, ge=0.0)
    leg_depth: int | None = Field(default=None, ge=1, le=2000)
    include_kinds: list[ChunkKind] = Field(default_factory=lambda: list(DEFAULT_KINDS), min_length=1)

    @field_validator("queries")
    @classmethod
    def _queries_not_blank(cls, queries: list[str]) -> list[str]:
        for i, q in enumerate(queries):
            if not q.strip():
                raise ValueError(f"queries[{i}] is empty")
        return queries

    def resolved(self, defaults: SearchSettings) -> ResolvedSearch:
        """Every knob filled in: this request's value, else the setting's."""
        dense_weight = self.dense_weight if self.dense_weight is not None else defaults.dense_weight
        sparse_weight = self.sparse_weight if self.sparse_weight is not None else defaults.sparse_weight
        mode = self.mode or defaults.mode
        if mode == "hybrid" and dense_weight == 0 and sparse_weight == 0:
            raise ConfigError(
                "search.dense_weight and search.sparse_weight are both 0: hybrid search has no leg"
            )
        return ResolvedSearch(
            queries=list(self.queries),
            mode=mode,
            top_k=self.top_k or defaults.top_k,
            filter=self.filter,
            rrf_k=self.rrf_k or defaults.rrf_k,
            weights=(dense_weight, sparse_weight),
            leg_depth=self.leg_depth or defaults.leg_depth,
            include_kinds=list(self.include_kinds),
        )


@dataclass(frozen=True)
class ResolvedSearch:
    queries: list[str]
    mode: SearchMode
    top_k: int
    filter: dict[str, Any] | None
    rrf_k: int
    weights: tuple[float, float]
    leg_depth: int
    include_kinds: list[str]


@dataclass(frozen=True)
class EncodedQueries:
    """The query-side vectors of a search, computed once (so latency can be measured without them)."""

    dense: np.ndarray | None  # (n_queries, dim) or None when no dense leg runs
    sparse: list[SparseVec] | None


PUBLIC_GROUP = (
    "public"  # every caller reads it; ``knowledge_base.default_acl`` gives it to unmarked documents
)


def require_groups(groups: Sequence[str] | str | None) -> list[str]:
    """The caller's ACL groups as a clean list, plus ``public`` (documents ingested without an ACL are
    everybody's: a manager asking with ``--group management`` still reads the handbook). Empty or blank
    groups are a ConfigError, never 'no filter'."""
    if isinstance(groups, str):
        # A bare string would otherwise be split into one-letter groups.
        raise ConfigError(f"user_groups must be a list of group names, got the string {groups!r}")
    cleaned = [g for g in (groups or []) if isinstance(g, str) and g.strip()]
    if not groups or len(cleaned) != len(groups):
        raise ConfigError("user_groups is empty or has blank names: a search needs the caller's ACL groups")
    return list(dict.fromkeys([*cleaned, PUBLIC_GROUP]))


def access_filter(
    user_filter: dict[str, Any] | None, groups: Sequence[str], kinds: Sequence[str]
) -> dict[str, Any]:
    """The filter actually sent to the store: the caller's (validated) filter AND kinds AND the ACL clause.

    The user filter is validated first (``FilterError`` with its JSON path propagates). Because the ACL
    clause is a sibling in a top-level ``$and``, nothing inside the user filter (``$or``, ``acl`` keys)
    can widen it.
    """
    clauses: list[dict[str, Any]] = []
    if user_filter is not None and parse_filter(user_filter) is not None:  # {} is "no condition"
        clauses.append(user_filter)
    clauses.append({"kind": {"$in": list(kinds)}})
    clauses.append({"acl": {"$in": require_groups(list(groups))}})
    return {"$and": clauses}


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[str]], k: int, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Fuse ranked id lists: ``score(d) = Σ wᵢ / (k + rankᵢ(d))`` with 1-based ranks.

    Returns (id, score) best first; ties keep the order of first appearance. An id repeated inside
    one list counts at its best rank only.
    """
    if weights is None:
        weights = [1.0] * len(ranked_lists)
    if len(weights) != len(ranked_lists):
        raise ValueError(f"{len(weights)} weights for {len(ranked_lists)} ranked lists")
    scores: dict[str, float] = {}
    for ranked, weight in zip(ranked_lists, weights, strict=True):
        seen: set[str] = set()
        for rank, item in enumerate(ranked, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def encode_queries(search: ResolvedSearch, kb: KnowledgeBase) -> EncodedQueries:
    """Embed all queries in one call and sparse-encode them, only for the legs the mode runs."""
    dense = kb.embedder.embed_queries(search.queries) if search.mode in ("dense", "hybrid") else None
    sparse = (
        [kb.sparse.encode_query(q) for q in search.queries] if search.mode in ("sparse", "hybrid") else None
    )
    return EncodedQueries(dense=dense, sparse=sparse)


def hybrid_search(request: SearchRequest, kb: KnowledgeBase, groups: Sequence[str]) -> list[Hit]:
    """Search the knowledge base as the caller ``groups``; at most ``top_k`` typed hits, best first.

    Each hit has ``chunk`` set and ``legs`` explaining it: ``dense``/``sparse`` ranks and scores for a
    single query; ``q1:dense``, ``q1:sparse``, ``q1:<mode>`` (the query's fused rank)... for several.
    Raises ``FilterError`` for a malformed filter and ``ConfigError`` for empty groups.
    """
    search = request.resolved(kb.settings.search)
    access_filter(search.filter, groups, search.include_kinds)  # reject bad filters/groups before embedding
    return search_encoded(search, kb, groups, encode_queries(search, kb))


def search_encoded(
    search: ResolvedSearch, kb: KnowledgeBase, groups: Sequence[str], encoded: EncodedQueries
) -> list[Hit]:
    """The store part of ``hybrid_search``, given precomputed query vectors (so latency can be measured
    without the embedding). The ACL clause for ``groups`` is added here, on every path to the store."""
    store_filter = access_filter(search.filter, groups, search.include_kinds)
    single = len(search.queries) == 1
    # Several queries are fused after the store: each must bring more than top_k candidates.
    limit = search.top_k if single else max(search.top_k, search.leg_depth)
    per_query: list[list[StoredHit]] = []
    for i in range(len(search.queries)):
        sparse = encoded.sparse[i] if encoded.sparse is not None else None
        if search.mode == "sparse" and (sparse is None or not sparse.indices):
            per_query.append([])  # only stop words: BM25 has nothing to match
            continue
        # In hybrid mode a term-less sparse vector simply leaves the dense leg alone in the fusion.
        per_query.append(
            kb.store.query(
                mode=search.mode,
                dense=encoded.dense[i] if encoded.dense is not None else None,
                sparse=sparse,
                filter=store_filter,
                limit=limit,
                leg_depth=search.leg_depth,
                rrf_k=search.rrf_k,
                weights=search.weights,
            )
        )
    if single:
        return [
            _to_hit(stored, _leg_scores(stored, search.mode, rank, prefix=""))
            for rank, stored in enumerate(per_query[0], start=1)
        ]
    return _fuse_queries(per_query, search)


def _leg_scores(stored: StoredHit, mode: SearchMode, rank: int, prefix: str) -> dict[str, LegScore]:
    legs = {f"{prefix}{name}": LegScore(rank=r, score=s) for name, (r, s) in stored.legs.items()}
    if mode != "hybrid" and f"{prefix}{mode}" not in legs:
        # A single-leg query: its own rank is the leg's rank.
        legs[f"{prefix}{mode}"] = LegScore(rank=rank, score=stored.score)
    return legs


def _fuse_queries(per_query: list[list[StoredHit]], search: ResolvedSearch) -> list[Hit]:
    fused = reciprocal_rank_fusion([[h.chunk.chunk_id for h in hits] for hits in per_query], k=search.rrf_k)
    first_seen: dict[str, StoredHit] = {}
    legs: dict[str, dict[str, LegScore]] = {}
    for q, hits in enumerate(per_query, start=1):
        for rank, stored in enumerate(hits, start=1):
            chunk_id = stored.chunk.chunk_id
            first_seen.setdefault(chunk_id, stored)
            merged = legs.setdefault(chunk_id, {})
            key = f"q{q}:{search.mode}"
            if key in merged:
                continue  # a chunk repeated within one query's list keeps its best rank
            merged.update(_leg_scores(stored, search.mode, rank, prefix=f"q{q}:"))
            # The rank that entered the multi-query fusion, kept even when the mode is a single leg.
            merged[key] = LegScore(rank=rank, score=stored.score)
    return [
        _to_hit(first_seen[chunk_id], legs[chunk_id], score=score)
        for chunk_id, score in fused[: search.top_k]
    ]


def _to_hit(stored: StoredHit, legs: dict[str, LegScore], score: float | None = None) -> Hit:
    chunk = stored.chunk
    return Hit(
        chunk_id=chunk.chunk_id,
        doc_id=chunk.doc_id,
        text=chunk.text,
        score=stored.score if score is None else score,
        source=chunk.source,
        title=chunk.title,
        legs=legs,
        chunk=chunk,
    )
