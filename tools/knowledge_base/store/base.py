"""The vector store interface: one Qdrant collection schema, two engines (embedded and server).

Schema (identical in both implementations):
- named dense vector ``dense`` (cosine, size = embedder dim);
- named sparse vector ``bm25`` with ``Modifier.IDF`` (the engine applies IDF; documents carry
  BM25 term-frequency saturation weights from the shared ``SparseEncoder``);
- payload = ``Chunk.model_dump(mode="json")`` plus ``committed`` (bool) and ``doc_version`` (str);
- payload indexes on ``doc_id``, ``source``, ``acl``, ``updated_at``, ``kind``, ``searchable``,
  ``committed``, ``keys.*`` lookups and any user metadata fields listed at creation.

Visibility: ingestion writes a document's new chunks with ``committed=False``, flips them to True in
one filtered payload update, then deletes the previous version. Every search and fetch ANDs
``committed=True``, so a crash mid-document never exposes a half-written document.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from tools.knowledge_base.records import Chunk

DENSE_VECTOR = "dense"
SPARSE_VECTOR = "bm25"

SearchMode = Literal["dense", "sparse", "hybrid"]


@dataclass(frozen=True)
class SparseVec:
    indices: list[int]
    values: list[float]


@dataclass
class StoredHit:
    """One point returned by a query: its chunk, fused score, and per-leg rank/score (1-based ranks)."""

    chunk: Chunk
    score: float
    legs: dict[str, tuple[int, float]] = field(default_factory=dict)


@dataclass
class DocumentState:
    """What the store knows about one document (for incremental ingest and pruning)."""

    doc_id: str
    source: str
    content_hash: str
    doc_version: str
    chunks: int


class VectorStore(ABC):
    """A knowledge-base collection. Implementations: ``EdgeStore`` (embedded), ``ServerStore`` (qdrant-client)."""

    @abstractmethod
    def ensure_collection(self, dim: int, embedder_name: str) -> None:
        """Create the collection and its payload indexes if missing; refuse a different embedder's index."""

    @abstractmethod
    def upsert(
        self, chunks: Sequence[Chunk], dense: np.ndarray | None, sparse: Sequence[SparseVec | None], doc_version: str
    ) -> None:
        """Write points (uncommitted). ``dense`` rows / ``sparse`` items align with ``chunks``; a None
        sparse item or a non-searchable chunk is stored without that vector."""

    @abstractmethod
    def commit_document(self, doc_id: str, doc_version: str) -> None:
        """Make ``doc_version`` of ``doc_id`` visible, then delete every other version of it."""

    @abstractmethod
    def delete_document(self, doc_id: str) -> int:
        """Remove every point of a document; returns how many were removed."""

    @abstractmethod
    def documents(self) -> dict[str, DocumentState]:
        """Committed documents by doc_id (read from their summary points)."""

    @abstractmethod
    def purge_uncommitted(self) -> int:
        """Delete points left uncommitted by an interrupted ingest; returns how many."""

    @abstractmethod
    def query(
        self,
        *,
        mode: SearchMode,
        dense: np.ndarray | None,
        sparse: SparseVec | None,
        filter: dict[str, Any] | None,
        limit: int,
        leg_depth: int,
        rrf_k: int,
        weights: tuple[float, float],
    ) -> list[StoredHit]:
        """Search searchable, committed points. ``filter`` is the validated JSON filter form (already
        including the ACL clause); hybrid fuses the dense and sparse legs with weighted RRF in the engine."""

    @abstractmethod
    def fetch(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Committed chunks by chunk id (any that do not exist are skipped), in the order asked."""

    @abstractmethod
    def scroll(self, filter: dict[str, Any] | None, limit: int = 1000) -> Iterator[Chunk]:
        """Every committed chunk matching ``filter``."""

    @abstractmethod
    def count(self) -> int:
        """Committed points."""

    @abstractmethod
    def close(self) -> None: ...
