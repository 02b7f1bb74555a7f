"""The embedded store: the Qdrant engine in-process (``qdrant-edge-py``), persisted under the data directory.

Layout of ``index_dir``: ``shard/`` (the engine's segments and WAL), ``index.json`` (which embedder and
sparse encoder built it), ``lock`` (held with ``flock`` while a process has the index open: the engine
supports one process per shard, and the lock turns a second opener into a clear error instead of a
corrupted shard).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from core.errors import ProviderUnavailable, RagpilotError
from tools.knowledge_base.store._shared import (
    INDEXED_FIELDS,
    IndexIdentity,
    hybrid_hits,
    read_identity,
    single_leg_hits,
    visible,
    write_identity,
)
from tools.knowledge_base.store.base import (
    DENSE_VECTOR,
    SPARSE_VECTOR,
    FilterInput,
    SearchMode,
    SparseVec,
    StoredHit,
)
from tools.knowledge_base.store.filters import (
    AndFilter,
    to_edge,
)
from tools.knowledge_base.store.qdrant_store import QdrantStore

_SCHEMA_TYPES = {
    "keyword": qe.PayloadSchemaType.Keyword,
    "bool": qe.PayloadSchemaType.Bool,
    "datetime": qe.PayloadSchemaType.Datetime,
    "integer": qe.PayloadSchemaType.Integer,
    "float": qe.PayloadSchemaType.Float,
}


class IndexLocked(ProviderUnavailable):
    """Another process has this embedded index open."""


def _acquire_lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise IndexLocked(
            "embedded Qdrant",
            f"the index {path.parent} is already open (by pid {holder}); the embedded engine allows "
            "one open store per index: close it or stop that process, or set QDRANT_URL to share a Qdrant server",
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def index_identity_at(index_dir: Path) -> IndexIdentity | None:
    """What the embedded index under ``index_dir`` was built with; None when there is none yet."""
    return read_identity(Path(index_dir) / "index.json")


class EdgeStore(QdrantStore):
    """A knowledge-base collection in an embedded ``qdrant_edge.EdgeShard`` (see ``VectorStore``)."""

    def __init__(
        self, index_dir: Path, *, sparse_encoder: str, max_search_threads: int | None = None
    ) -> None:
        self.index_dir = Path(index_dir)
        self.index_dir.mkdir(parents=True, exist_ok=True)
        self.sparse_encoder = sparse_encoder
        self._max_search_threads = max_search_threads
        self._lock_fd: int | None = _acquire_lock(self.index_dir / "lock")
        self._shard_dir = self.index_dir / "shard"
        self._identity_path = self.index_dir / "index.json"
        self._shard: Any = None
        if self._identity_path.exists() and self._shard_dir.exists():
            self._shard = qe.EdgeShard.load(str(self._shard_dir))

    # ------------------------------------------------------------------------------------ lifecycle

    def index_identity(self) -> IndexIdentity | None:
        return index_identity_at(self.index_dir)

    def ensure_collection(self, dim: int, embedder_name: str) -> None:
        wanted = IndexIdentity(embedder=embedder_name, dim=dim, sparse_encoder=self.sparse_encoder)
        existing = self.index_identity()
        if existing is not None:
            existing.check_matches(wanted, str(self.index_dir))
        else:
            write_identity(self._identity_path, wanted)
        if self._shard is None:
            config = qe.EdgeConfig(
                vectors={DENSE_VECTOR: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
                sparse_vectors={SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
                max_search_threads=self._max_search_threads,
            )
            if self._shard_dir.exists() and any(self._shard_dir.iterdir()):
                self._shard = qe.EdgeShard.load(str(self._shard_dir))
            else:
                self._shard = qe.EdgeShard.create(str(self._shard_dir), config)
            for field, kind in INDEXED_FIELDS.items():
                self._shard.update(qe.UpdateOperation.create_field_index(field, _SCHEMA_TYPES[kind]))

    @property
    def shard(self) -> Any:
        if self._shard is None:
            raise RagpilotError(
                f"the index {self.index_dir} has no collection yet: call ensure_collection first"
            )
        return self._shard

    def flush(self) -> None:
        if self._shard is not None:
            self._shard.flush()

    def optimize(self) -> bool:
        """Build HNSW and merge segments. Holds the GIL for its whole run (minutes at 100k points)."""
        return bool(self.shard.optimize())

    def close(self) -> None:
        if self._shard is not None:
            self._shard.flush()
            self._shard.close()
            self._shard = None
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    # ------------------------------------------------------------------------ engine primitives

    def _has_collection(self) -> bool:
        return self._shard is not None

    def _sparse_vector(self, sparse: SparseVec) -> Any:
        return qe.SparseVector(list(sparse.indices), list(sparse.values))

    def _point(self, point_id: str, vectors: dict[str, Any], payload: dict[str, Any]) -> Any:
        return qe.Point(point_id, vectors, payload)

    def _upsert_points(self, points: Sequence[Any]) -> None:
        self.shard.update(qe.UpdateOperation.upsert_points(list(points)))

    def _set_payload_where(self, where: AndFilter, payload: dict[str, Any]) -> None:
        self.shard.update(qe.UpdateOperation.set_payload_by_filter(to_edge(where), payload))

    def _delete_where(self, where: AndFilter) -> None:
        self.shard.update(qe.UpdateOperation.delete_points_by_filter(to_edge(where)))

    def _delete_ids(self, point_ids: Sequence[str]) -> None:
        self.shard.update(qe.UpdateOperation.delete_points(list(point_ids)))

    def _count_where(self, where: AndFilter) -> int:
        return int(self.shard.count(qe.CountRequest(exact=True, filter=to_edge(where))))

    def _scroll_page(
        self, where: AndFilter, payload: bool | list[str], page: int, offset: Any
    ) -> tuple[Sequence[Any], Any]:
        selector = qe.PayloadSelector.Include(payload) if isinstance(payload, list) else payload
        request = qe.ScrollRequest(
            offset=offset, limit=page, filter=to_edge(where), with_payload=selector, with_vector=False
        )
        return self.shard.scroll(request)

    def _facet_doc_ids(self, where: AndFilter, limit: int) -> dict[str, int]:
        facet = self.shard.facet(
            qe.FacetRequest(key="doc_id", limit=limit, exact=True, filter=to_edge(where))
        )
        return {str(h.value): int(h.count) for h in facet.hits}

    # ------------------------------------------------------------------------------------- search

    def query(
        self,
        *,
        mode: SearchMode,
        dense: np.ndarray | None,
        sparse: SparseVec | None,
        filter: FilterInput,
        limit: int,
        leg_depth: int,
        rrf_k: int,
        weights: tuple[float, float],
    ) -> list[StoredHit]:
        if self._shard is None:
            return []
        where = to_edge(visible(filter))
        legs = self._legs(mode, dense, sparse)
        if not legs:
            return []
        if mode != "hybrid":
            ((name, leg_query),) = legs
            found = self._shard.query(
                qe.QueryRequest(limit=limit, query=leg_query, filter=where, with_payload=True)
            )
            return single_leg_hits(name, [(str(p.id), float(p.score), p.payload) for p in found])
        leg_weight = {"dense": weights[0], "sparse": weights[1]}
        prefetches = [
            # A one-source RRF scores 1 / (rank + k - 1) (1-based rank): k + 1 gives the textbook 1 / (k + rank).
            qe.Prefetch(
                limit=leg_depth,
                query=qe.Fusion.Rrf(k=rrf_k + 1),  # type: ignore[arg-type]  # the stub omits Fusion.Rrf
                prefetches=[qe.Prefetch(limit=leg_depth, query=leg_query, filter=where)],
                filter=where,
            )
            for _name, leg_query in legs
        ]
        # Qdrant's own weighted RRF divides the rank by the weight; the documented formula multiplies the
        # reciprocal rank by it, so the weighted sum is a score formula over the per-leg RRF scores.
        terms = [
            qe.Expression.Mult(
                [qe.Expression.Constant(leg_weight[name]), qe.Expression.Variable(f"$score[{i}]")]
            )
            for i, (name, _q) in enumerate(legs)
        ]
        fused = qe.QueryRequest(
            limit=limit,
            prefetches=prefetches,
            query=qe.Formula(
                qe.Expression.Sum(terms), defaults={f"$score[{i}]": 0.0 for i in range(len(legs))}
            ),
            filter=where,
            with_payload=True,
        )
        # Each leg also runs alone (ids and scores only), in the same planned batch as the fused query, so
        # every hit can report its rank and score per leg: about +0.5 ms p50 at SciFact size
        # (bench/store_legs.py).
        leg_requests = [
            qe.QueryRequest(limit=leg_depth, query=q, filter=where, with_payload=False) for _n, q in legs
        ]
        results = self._shard.query_batch(qe.QueryBatchRequest([fused, *leg_requests]))
        per_leg = {
            name: [(str(p.id), float(p.score)) for p in res]
            for (name, _q), res in zip(legs, results[1:], strict=True)
        }
        return hybrid_hits(
            [(str(p.id), float(p.score), p.payload) for p in results[0]],
            per_leg.get("dense", []),
            per_leg.get("sparse", []),
        )

    @staticmethod
    def _legs(mode: SearchMode, dense: np.ndarray | None, sparse: SparseVec | None) -> list[tuple[str, Any]]:
        legs = []
        if mode in ("dense", "hybrid"):
            if dense is None:
                raise ValueError(f"mode {mode!r} needs a dense query vector")
            legs.append(
                ("dense", qe.Query.Nearest(np.asarray(dense, np.float32).tolist(), using=DENSE_VECTOR))
            )
        if mode in ("sparse", "hybrid"):
            if sparse is None:
                raise ValueError(f"mode {mode!r} needs a sparse query vector")
            # A query with no terms (only stop words) has no sparse leg.
            if sparse.indices:
                vector = qe.SparseVector(list(sparse.indices), list(sparse.values))
                legs.append(("sparse", qe.Query.Nearest(vector, using=SPARSE_VECTOR)))
        return legs
