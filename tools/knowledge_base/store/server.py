"""The scale-out store: a Qdrant server or cluster through ``qdrant-client`` (same schema and semantics as
``EdgeStore``). ``ServerStore.local()`` runs the same code path on qdrant-client's local mode, for tests.

The index identity (embedder, dim, sparse encoder) lives in the collection's own metadata.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from agent.errors import ProviderUnavailable
from tools.knowledge_base.records import Chunk
from tools.knowledge_base.store._shared import (
    INDEXED_FIELDS,
    SCROLL_PAGE,
    SUMMARY_FIELDS,
    UPSERT_BATCH,
    IndexIdentity,
    chunk_from_payload,
    chunk_payload,
    commit_payload,
    doc_condition,
    document_states,
    hybrid_hits,
    in_asked_order,
    single_leg_hits,
    stale_points,
    versioned_point_id,
    visible,
)
from tools.knowledge_base.store.base import (
    DENSE_VECTOR,
    SPARSE_VECTOR,
    DocumentState,
    FilterInput,
    SearchMode,
    SparseVec,
    StoredHit,
    VectorStore,
)
from tools.knowledge_base.store.filters import (
    AndFilter,
    InCondition,
    MatchCondition,
    NotEqualCondition,
    to_client,
)

_SCHEMA_TYPES = {
    "keyword": models.PayloadSchemaType.KEYWORD,
    "bool": models.PayloadSchemaType.BOOL,
    "datetime": models.PayloadSchemaType.DATETIME,
    "integer": models.PayloadSchemaType.INTEGER,
    "float": models.PayloadSchemaType.FLOAT,
}


class ServerStore(VectorStore):
    """A knowledge-base collection on a Qdrant server (see ``VectorStore``)."""

    def __init__(
        self, client: QdrantClient, collection: str, *, sparse_encoder: str, is_local: bool = False
    ) -> None:
        self.client = client
        self.collection = collection
        self._sparse_encoder = sparse_encoder
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

    def ensure_collection(self, dim: int, embedder_name: str) -> None:
        wanted = IndexIdentity(embedder=embedder_name, dim=dim, sparse_encoder=self._sparse_encoder)
        if self._collection_exists():
            info = self.client.get_collection(self.collection)
            existing = IndexIdentity.from_dict(info.config.metadata or {})
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

    # ---------------------------------------------------------------------------------------- writes

    def upsert(
        self,
        chunks: Sequence[Chunk],
        dense: np.ndarray | None,
        sparse: Sequence[SparseVec | None],
        doc_version: str,
        ingest_signature: str = "",
    ) -> None:
        if dense is not None and len(dense) != len(chunks):
            raise ValueError(f"{len(dense)} dense vectors for {len(chunks)} chunks")
        if len(sparse) != len(chunks):
            raise ValueError(f"{len(sparse)} sparse vectors for {len(chunks)} chunks")
        points = []
        for i, chunk in enumerate(chunks):
            vectors: dict[str, Any] = {}
            if chunk.searchable:
                if dense is not None:
                    vectors[DENSE_VECTOR] = np.asarray(dense[i], np.float32).tolist()
                terms = sparse[i]
                if terms is not None and terms.indices:
                    vectors[SPARSE_VECTOR] = models.SparseVector(
                        indices=list(terms.indices), values=list(terms.values)
                    )
            points.append(
                models.PointStruct(
                    id=versioned_point_id(chunk.chunk_id, doc_version),
                    vector=vectors,
                    payload=chunk_payload(chunk, doc_version, ingest_signature),
                )
            )
        for start in range(0, len(points), UPSERT_BATCH):
            self.client.upsert(self.collection, points=points[start : start + UPSERT_BATCH], wait=True)

    def commit_document(self, doc_id: str, doc_version: str) -> None:
        this_version = AndFilter(
            conditions=[doc_condition(doc_id), MatchCondition(field="doc_version", value=doc_version)]
        )
        self.client.set_payload(
            self.collection, payload=commit_payload(), points=to_client(this_version), wait=True
        )
        other_versions = AndFilter(
            conditions=[doc_condition(doc_id), NotEqualCondition(field="doc_version", value=doc_version)]
        )
        self._delete_where(other_versions)

    def _delete_where(self, where: AndFilter) -> None:
        self.client.delete(
            self.collection, points_selector=models.FilterSelector(filter=to_client(where)), wait=True
        )

    def _count_where(self, where: AndFilter) -> int:
        return int(self.client.count(self.collection, count_filter=to_client(where), exact=True).count)

    def delete_document(self, doc_id: str) -> int:
        if not self._collection_exists():
            return 0
        only_doc = AndFilter(conditions=[doc_condition(doc_id)])
        removed = self._count_where(only_doc)
        if removed:
            self._delete_where(only_doc)
        return removed

    def purge_uncommitted(self) -> int:
        if not self._collection_exists():
            return 0
        uncommitted = AndFilter(conditions=[MatchCondition(field="committed", value=False)])
        removed = self._count_where(uncommitted)
        if removed:
            self._delete_where(uncommitted)
        versions = {doc_id: state.doc_version for doc_id, state in self.documents().items()}
        committed = (
            (str(r.id), r.payload["doc_id"], r.payload.get("doc_version"))
            for r in self._scroll_records(visible(None), ["doc_id", "doc_version"])
        )
        stale: list[Any] = stale_points(versions, committed)
        for start in range(0, len(stale), UPSERT_BATCH):
            self.client.delete(
                self.collection,
                points_selector=models.PointIdsList(points=stale[start : start + UPSERT_BATCH]),
                wait=True,
            )
        return removed + len(stale)

    # ----------------------------------------------------------------------------------------- reads

    def documents(self) -> dict[str, DocumentState]:
        if not self._collection_exists():
            return {}
        summaries = self._scroll_records(visible({"kind": "summary"}), SUMMARY_FIELDS)
        return document_states((r.payload or {} for r in summaries), self._chunks_per_document())

    def _chunks_per_document(self) -> dict[str, int]:
        total = self.count()
        if not total:
            return {}
        facet = self.client.facet(
            self.collection, key="doc_id", facet_filter=to_client(visible(None)), limit=total, exact=True
        )
        return {str(h.value): int(h.count) for h in facet.hits}

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

    def fetch(self, chunk_ids: Sequence[str], filter: FilterInput = None) -> list[Chunk]:
        if not chunk_ids or not self._collection_exists():
            return []
        wanted = list(dict.fromkeys(chunk_ids))
        found: list[Chunk] = []
        for start in range(0, len(wanted), SCROLL_PAGE):
            by_id = AndFilter(
                conditions=[InCondition(field="chunk_id", values=wanted[start : start + SCROLL_PAGE])]
            )
            where = AndFilter(conditions=[by_id, visible(filter)])
            found.extend(chunk_from_payload(r.payload or {}) for r in self._scroll_records(where, True))
        return in_asked_order(found, chunk_ids)

    def scroll(self, filter: FilterInput, limit: int = SCROLL_PAGE) -> Iterator[Chunk]:
        if not self._collection_exists():
            return
        for record in self._scroll_records(visible(filter), True, page=limit):
            yield chunk_from_payload(record.payload or {})

    def _scroll_records(self, where: AndFilter, payload: Any, page: int = SCROLL_PAGE) -> Iterator[Any]:
        client_filter = to_client(where)
        # Bounded: every page but the last is full, so this many pages cover every matching point.
        max_pages = self._count_where(where) // max(page, 1) + 2
        offset = None
        for _ in range(max_pages):
            records, offset = self.client.scroll(
                self.collection,
                scroll_filter=client_filter,
                limit=page,
                offset=offset,
                with_payload=payload,
                with_vectors=False,
            )
            yield from records
            if offset is None:
                return

    def count(self, filter: FilterInput = None) -> int:
        if not self._collection_exists():
            return 0
        return self._count_where(visible(filter))
