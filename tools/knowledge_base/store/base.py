"""The vector store interface: one Qdrant collection schema, two engines (embedded and server).

Schema (identical in both implementations):
- named dense vector ``dense`` (cosine, size = embedder dim);
- named sparse vector ``bm25`` with ``Modifier.IDF`` (the engine applies IDF; documents carry
  BM25 term-frequency saturation weights from the shared ``SparseEncoder``);
- payload = ``Chunk.model_dump(mode="json")`` plus ``committed`` (bool), ``committed_at`` (epoch s),
  ``doc_version`` (str) and
  ``ingest_signature`` (a fingerprint of the chunking settings, ACL, title and metadata the document was
  indexed with, so changing any of them re-indexes an unchanged file);
- payload indexes on ``doc_id``, ``chunk_id``, ``source``, ``acl``, ``updated_at``, ``kind``, ``committed`` (other
  fields, ``keys.*`` and user metadata, are filtered without an index: exact at knowledge-base scale).

Visibility: ingestion writes a document's new chunks with ``committed=False``, flips them to True in
one filtered payload update, then deletes the previous version. Every search and fetch ANDs
``committed=True``, so a crash mid-document never exposes a half-written document. Point ids are
derived from (chunk id, doc_version), so a new version never overwrites the old one's points: until
the commit, readers see the old version whole. Chunks are fetched by their ``chunk_id`` payload.

Filters are the JSON form of ``store.filters`` (a dict, JSON text, or an already parsed ``AndFilter``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from core.errors import ConfigError
from tools.knowledge_base.records import Chunk
from tools.knowledge_base.sparse import SparseVec
from tools.knowledge_base.store.filters import AndFilter

FilterInput = dict[str, Any] | str | AndFilter | None

DENSE_VECTOR = "dense"
SPARSE_VECTOR = "bm25"

SearchMode = Literal["dense", "sparse", "hybrid"]


#: bumped when the point layout changes in a way old indexes cannot serve
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class IndexIdentity:
    """What vectors an index holds; an index never mixes two embedders or two sparse encoders."""

    embedder: str
    dim: int
    sparse_encoder: str
    schema_version: int = SCHEMA_VERSION

    def as_dict(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder,
            "dim": self.dim,
            "sparse_encoder": self.sparse_encoder,
            "schema_version": self.schema_version,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IndexIdentity:
        return cls(
            embedder=str(data.get("embedder", "")),
            dim=int(data.get("dim", 0)),
            sparse_encoder=str(data.get("sparse_encoder", "")),
            schema_version=int(data.get("schema_version", 0)),
        )

    def check_matches(self, wanted: IndexIdentity, where: str) -> None:
        """Raise ConfigError when an existing index was built with other models than this run uses."""
        if self == wanted:
            return
        raise ConfigError(
            f"the index {where} was built with embedder {self.embedder!r} (dim {self.dim}), sparse encoder "
            f"{self.sparse_encoder!r}, schema {self.schema_version}; this run uses {wanted.embedder!r} (dim "
            f"{wanted.dim}), {wanted.sparse_encoder!r}, schema {wanted.schema_version}. Vectors of different "
            "models cannot be mixed: choose another collection name (qdrant.collection, env "
            "RAGPILOT_QDRANT__COLLECTION) or delete the index and ingest again."
        )


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
    ingest_signature: str = ""


class VectorStore(ABC):
    """A knowledge-base collection. Implementations: ``EdgeStore`` (embedded), ``ServerStore`` (qdrant-client)."""

    #: the sparse encoder's name (``SparseEncoder.name``) the collection is built with, or is to be
    sparse_encoder: str

    @abstractmethod
    def ensure_collection(self, dim: int, embedder_name: str) -> None:
        """Create the collection and its payload indexes if missing; refuse a different embedder's index."""

    @abstractmethod
    def index_identity(self) -> IndexIdentity | None:
        """What the existing collection was built with; None when there is none yet."""

    @abstractmethod
    def upsert(
        self,
        chunks: Sequence[Chunk],
        dense: np.ndarray | None,
        sparse: Sequence[SparseVec | None],
        doc_version: str,
        ingest_signature: str = "",
    ) -> None:
        """Write points (uncommitted). ``dense`` rows / ``sparse`` items align with ``chunks``; a None
        sparse item or a non-searchable chunk is stored without that vector. ``ingest_signature`` is
        recorded on every point (see ``DocumentState.ingest_signature``)."""

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
        filter: FilterInput,
        limit: int,
        leg_depth: int,
        rrf_k: int,
        weights: tuple[float, float],
    ) -> list[StoredHit]:
        """Search searchable, committed points. ``filter`` is the JSON filter form (already including the
        ACL clause). Hybrid fuses the dense and sparse legs (each ``leg_depth`` deep) in the engine with
        weighted RRF, ``score(d) = w_dense / (rrf_k + rank_dense(d)) + w_sparse / (rrf_k + rank_sparse(d))``
        with 1-based ranks (a leg that missed ``d`` adds 0); ``weights`` is ``(w_dense, w_sparse)``.
        Every hit reports the rank and raw score it had in each leg that found it."""

    @abstractmethod
    def fetch(self, chunk_ids: Sequence[str], filter: FilterInput = None) -> list[Chunk]:
        """Committed chunks by chunk id that also match ``filter`` (pass the ACL clause here), in the
        order asked, each once; ids that do not exist or do not match are skipped."""

    @abstractmethod
    def scroll(self, filter: FilterInput, limit: int = 1000) -> Iterator[Chunk]:
        """Every committed chunk matching ``filter`` (``limit`` is the page size)."""

    @abstractmethod
    def count(self, filter: FilterInput = None) -> int:
        """Committed points (matching ``filter``)."""

    def flush(self) -> None:  # noqa: B027 - optional hook: engines that persist on write need nothing
        """Make every write durable (a no-op where the engine already is)."""

    def optimize(self) -> bool:
        """Build the vector indexes now (slow; only worth it for large collections). True if work was done."""
        return False

    @abstractmethod
    def close(self) -> None:
        """Flush and release the store; idempotent."""

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
