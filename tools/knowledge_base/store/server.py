"""The scale-out store: a Qdrant server or cluster through ``qdrant-client`` (same schema and semantics as
``EdgeStore``). ``ServerStore.local()`` runs the same code path on qdrant-client's local mode, for tests.

The index identity (embedder, dim, sparse encoder) lives in the collection's own metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from core.errors import ProviderUnavailable
from tools.knowledge_base.store._shared import (
    INDEXED_FIELDS,
    IndexIdentity,
    hybrid_hits,
    single_leg_hits,
    visible,
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
    to_client,
)
from tools.knowledge_base.store.qdrant_store import QdrantStore

_SCHEMA_TYPES = {
    "keyword": models.PayloadSchemaType.KEYWORD,
    "bool": models.PayloadSchemaType.BOOL,
    "datetime": models.PayloadSchemaType.DATETIME,
    "integer": models.PayloadSchemaType.INTEGER,
    "float": models.PayloadSchemaType.FLOAT,
}


class ServerStore(QdrantStore):
    """A knowledge-base collection on a Qdrant server (see ``VectorStore``)."""

    def __init__(
        self, client: QdrantClient, collection: str, *, sparse_encoder: str, is_local: bool = False
    ) -> None:
        self.client = client
        self.collection = collection
        self.sparse_encoder = sparse_encoder
        # Local mode ignores payload indexes (and warns about each): skip creating them there.
        self._is_local = is_local
        self._exists: bool | None = None

    @classmethod
    def connect(
        cls,
        url: str,
        collection: str,
        *,
        sparse_encoder: str,
        api_key: str | None = None,
        timeout_s: float = 10.0,
    ) -> ServerStore:
        """A store on the server at ``url``; ProviderUnavailable naming QDRANT_URL when it cannot be reached."""
        try:
            client = QdrantClient(url=url, api_key=api_key, timeout=max(1, round(timeout_s)))
            client.get_collections()
        except Exception as exc:  # the client raises transport-specific errors; all mean "unreachable"
            raise ProviderUnavailable(
                "Qdrant server", f"cannot reach QDRANT_URL={url} ({type(exc).__name__}: {exc})"
            ) from exc
        return cls(client, collection, sparse_encoder=sparse_encoder)

    @classmethod
    def local(cls, location: str, collection: str, *, sparse_encoder: str) -> ServerStore:
        """qdrant-client's local mode: ``":memory:"`` or a directory path (pure Python, slow; for tests)."""
        client = QdrantClient(location=":memory:") if location == ":memory:" else QdrantClient(path=location)
        return cls(client, collection, sparse_encoder=sparse_encoder, is_local=True)

    # ------------------------------------------------------------------------------------ lifecycle

    def _collection_exists(self) -> bool:
        if not self._exists:
            self._exists = self.client.collection_exists(self.collection)
        return self._exists

    def index_identity(self) -> IndexIdentity | None:
        if not self._collection_exists():
            return None
        return IndexIdentity.from_dict(self.client.get_collection(self.collection).config.metadata or {})

    def ensure_collection(self, dim: int, embedder_name: str) -> None:
        wanted = IndexIdentity(embedder=embedder_name, dim=dim, sparse_encoder=self.sparse_encoder)
        if self._collection_exists():
            existing = self.index_identity()
            assert existing is not None
            existing.check_matches(wanted, f"collection {self.collection!r} on the Qdrant server")
            return
        self.client.create_collection(
            self.collection,
            vectors_config={DENSE_VECTOR: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata=wanted.as_dict(),
        )
        if not self._is_local:
            for field, kind in INDEXED_FIELDS.items():
                self.client.create_payload_index(
                    self.collection, field, field_schema=_SCHEMA_TYPES[kind], wait=True
                )
        self._exists = True

    def close(self) -> None:
        self.client.close()

    # ------------------------------------------------------------------------ engine primitives

    def _has_collection(self) -> bool:
        return self._collection_exists()

    def _sparse_vector(self, sparse: SparseVec) -> Any:
        return models.SparseVector(indices=list(sparse.indices), values=list(sparse.values))

    def _point(self, point_id: str, vectors: dict[str, Any], payload: dict[str, Any]) -> Any:
        return models.PointStruct(id=point_id, vector=vectors, payload=payload)

    def _upsert_points(self, points: Sequence[Any]) -> None:
        self.client.upsert(self.collection, points=list(points), wait=True)

    def _set_payload_where(self, where: AndFilter, payload: dict[str, Any]) -> None:
        self.client.set_payload(self.collection, payload=payload, points=to_client(where), wait=True)

    def _delete_where(self, where: AndFilter) -> None:
        self.client.delete(
            self.collection, points_selector=models.FilterSelector(filter=to_client(where)), wait=True
        )

    def _delete_ids(self, point_ids: Sequence[str]) -> None:
        self.client.delete(
            self.collection, points_selector=models.PointIdsList(points=list(point_ids)), wait=True
        )

    def _count_where(self, where: AndFilter) -> int:
        return int(self.client.count(self.collection, count_filter=to_client(where), exact=True).count)

    def _scroll_page(
        self, where: AndFilter, payload: bool | list[str], page: int, offset: Any
    ) -> tuple[Sequence[Any], Any]:
        return self.client.scroll(
            self.collection,
            scroll_filter=to_client(where),
            limit=page,
            offset=offset,
            with_payload=payload,
            with_vectors=False,
        )

    def _facet_doc_ids(self, where: AndFilter, limit: int) -> dict[str, int]:
        facet = self.client.facet(
            self.collection, key="doc_id", facet_filter=to_client(where), limit=limit, exact=True
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
        if not self._collection_exists():
            return []
        where = to_client(visible(filter))
        legs = self._legs(mode, dense, sparse)
        if not legs:
            return []
        if mode != "hybrid":
            ((name, vector, using),) = legs
            found = self.client.query_points(
                self.collection, query=vector, using=using, query_filter=where, limit=limit, with_payload=True
            ).points
            return single_leg_hits(name, [(str(p.id), float(p.score), p.payload or {}) for p in found])
        leg_weight = {"dense": weights[0], "sparse": weights[1]}
        prefetches = [
            # See EdgeStore.query: k + 1 turns one-source RRF into 1 / (k + rank) with 1-based ranks.
            models.Prefetch(
                limit=leg_depth,
                query=models.RrfQuery(rrf=models.Rrf(k=rrf_k + 1)),
                prefetch=[models.Prefetch(limit=leg_depth, query=vector, using=using, filter=where)],
                filter=where,
            )
            for _name, vector, using in legs
        ]
        formula = models.FormulaQuery(
            formula=models.SumExpression(
                sum=[
                    models.MultExpression(mult=[leg_weight[name], f"$score[{i}]"])
                    for i, (name, _v, _u) in enumerate(legs)
                ]
            ),
            defaults={f"$score[{i}]": 0.0 for i in range(len(legs))},
        )
        requests = [
            models.QueryRequest(
                prefetch=prefetches, query=formula, filter=where, limit=limit, with_payload=True
            ),
            *(
                models.QueryRequest(
                    query=vector, using=using, filter=where, limit=leg_depth, with_payload=False
                )
                for _n, vector, using in legs
            ),
        ]
        results = self.client.query_batch_points(self.collection, requests=requests)
        per_leg = {
            name: [(str(p.id), float(p.score)) for p in res.points]
            for (name, _v, _u), res in zip(legs, results[1:], strict=True)
        }
        return hybrid_hits(
            [(str(p.id), float(p.score), p.payload or {}) for p in results[0].points],
            per_leg.get("dense", []),
            per_leg.get("sparse", []),
        )

    @staticmethod
    def _legs(
        mode: SearchMode, dense: np.ndarray | None, sparse: SparseVec | None
    ) -> list[tuple[str, Any, str]]:
        legs: list[tuple[str, Any, str]] = []
        if mode in ("dense", "hybrid"):
            if dense is None:
                raise ValueError(f"mode {mode!r} needs a dense query vector")
            legs.append(("dense", np.asarray(dense, np.float32).tolist(), DENSE_VECTOR))
        if mode in ("sparse", "hybrid"):
            if sparse is None:
                raise ValueError(f"mode {mode!r} needs a sparse query vector")
            if sparse.indices:  # a query of stop words only has no sparse leg
                vector = models.SparseVector(indices=list(sparse.indices), values=list(sparse.values))
                legs.append(("sparse", vector, SPARSE_VECTOR))
        return legs
