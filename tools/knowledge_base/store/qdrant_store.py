"""The store logic both Qdrant engines share, written once over a handful of engine primitives.

Writes (versioned upsert, commit, delete, purge) and reads (documents, fetch, scroll, count) mean the
same on the embedded engine and on a server; only the client calls differ. ``EdgeStore`` and
``ServerStore`` implement the primitives below (and their own collection setup and ``query``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from tools.knowledge_base.records import Chunk
from tools.knowledge_base.store._shared import (
    SCROLL_PAGE,
    SUMMARY_FIELDS,
    UPSERT_BATCH,
    chunk_from_payload,
    chunk_payload,
    commit_payload,
    doc_condition,
    document_states,
    in_asked_order,
    stale_points,
    versioned_point_id,
    visible,
)
from tools.knowledge_base.store.base import (
    DENSE_VECTOR,
    SPARSE_VECTOR,
    DocumentState,
    FilterInput,
    SparseVec,
    VectorStore,
)
from tools.knowledge_base.store.filters import AndFilter, InCondition, MatchCondition, NotEqualCondition


class QdrantStore(VectorStore):
    """``VectorStore`` semantics over engine primitives (see the module docstring)."""

    # ------------------------------------------------------------------------------ engine primitives

    @abstractmethod
    def _has_collection(self) -> bool:
        """Whether the collection exists yet (reads of a missing collection find nothing)."""

    @abstractmethod
    def _sparse_vector(self, sparse: SparseVec) -> Any:
        """The engine's sparse vector object."""

    @abstractmethod
    def _point(self, point_id: str, vectors: dict[str, Any], payload: dict[str, Any]) -> Any:
        """The engine's point object with these named vectors."""

    @abstractmethod
    def _upsert_points(self, points: Sequence[Any]) -> None: ...

    @abstractmethod
    def _set_payload_where(self, where: AndFilter, payload: dict[str, Any]) -> None: ...

    @abstractmethod
    def _delete_where(self, where: AndFilter) -> None: ...

    @abstractmethod
    def _delete_ids(self, point_ids: Sequence[str]) -> None: ...

    @abstractmethod
    def _count_where(self, where: AndFilter) -> int: ...

    @abstractmethod
    def _scroll_page(
        self, where: AndFilter, payload: bool | list[str], page: int, offset: Any
    ) -> tuple[Sequence[Any], Any]:
        """One page of records (each with ``.id`` and ``.payload``) and the next offset (None at the end)."""

    @abstractmethod
    def _facet_doc_ids(self, where: AndFilter, limit: int) -> dict[str, int]:
        """Points per ``doc_id`` among those matching ``where``."""

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
            if chunk.searchable:  # a summary or table-parent point is stored without vectors
                if dense is not None:
                    vectors[DENSE_VECTOR] = np.asarray(dense[i], np.float32).tolist()
                terms = sparse[i]
                if terms is not None and terms.indices:
                    vectors[SPARSE_VECTOR] = self._sparse_vector(terms)
            payload = chunk_payload(chunk, doc_version, ingest_signature)
            points.append(self._point(versioned_point_id(chunk.chunk_id, doc_version), vectors, payload))
        for start in range(0, len(points), UPSERT_BATCH):
            self._upsert_points(points[start : start + UPSERT_BATCH])

    def commit_document(self, doc_id: str, doc_version: str) -> None:
        this_version = AndFilter(
            conditions=[doc_condition(doc_id), MatchCondition(field="doc_version", value=doc_version)]
        )
        self._set_payload_where(this_version, commit_payload())
        other_versions = AndFilter(
            conditions=[doc_condition(doc_id), NotEqualCondition(field="doc_version", value=doc_version)]
        )
        self._delete_where(other_versions)

    def delete_document(self, doc_id: str) -> int:
        if not self._has_collection():
            return 0
        only_doc = AndFilter(conditions=[doc_condition(doc_id)])
        removed = self._count_where(only_doc)
        if removed:
            self._delete_where(only_doc)
        return removed

    def purge_uncommitted(self) -> int:
        if not self._has_collection():
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
        stale = stale_points(versions, committed)
        for start in range(0, len(stale), UPSERT_BATCH):
            self._delete_ids(stale[start : start + UPSERT_BATCH])
        return removed + len(stale)

    # ----------------------------------------------------------------------------------------- reads

    def documents(self) -> dict[str, DocumentState]:
        if not self._has_collection():
            return {}
        summaries = self._scroll_records(visible({"kind": "summary"}), SUMMARY_FIELDS)
        return document_states((r.payload or {} for r in summaries), self._chunks_per_document())

    def _chunks_per_document(self) -> dict[str, int]:
        total = self.count()
        return self._facet_doc_ids(visible(None), total) if total else {}

    def fetch(self, chunk_ids: Sequence[str], filter: FilterInput = None) -> list[Chunk]:
        if not chunk_ids or not self._has_collection():
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
        if not self._has_collection():
            return
        for record in self._scroll_records(visible(filter), True, page=limit):
            yield chunk_from_payload(record.payload or {})

    def _scroll_records(
        self, where: AndFilter, payload: bool | list[str], page: int = SCROLL_PAGE
    ) -> Iterator[Any]:
        # Bounded: every page but the last is full, so this many pages cover every matching point.
        max_pages = self._count_where(where) // max(page, 1) + 2
        offset = None
        for _ in range(max_pages):
            records, offset = self._scroll_page(where, payload, page, offset)
            yield from records
            if offset is None:
                return

    def count(self, filter: FilterInput = None) -> int:
        if not self._has_collection():
            return 0
        return self._count_where(visible(filter))
