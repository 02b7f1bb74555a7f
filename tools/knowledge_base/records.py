"""The records the knowledge base is made of (seed 003: typed chunk records with neighbours and keys).

Loaders turn files into ``LoadedDocument``s made of ``Block``s (structure kept: headings, pages,
table rows); chunkers turn blocks into ``Chunk``s; the store keeps chunks as points whose payload is
``Chunk.model_dump(mode="json")``, so neighbours, parents and keyed rows are fetched by id.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

ChunkKind = Literal["chunk", "parent", "row", "sheet_summary", "summary"]
BlockKind = Literal["text", "table_row", "table_summary", "code"]

# Namespace for point ids: Qdrant wants a UUID or an integer, chunk ids are readable strings.
_POINT_NAMESPACE = uuid.UUID("6f1c1d2e-4a55-4d55-9a4e-9a3c2b7f0a11")


def content_hash(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def point_id(chunk_id: str) -> str:
    """The Qdrant point id of a chunk: a UUID derived from its readable id, stable across runs."""
    return str(uuid.uuid5(_POINT_NAMESPACE, chunk_id))


class Block(BaseModel):
    """One structural unit a loader found: a paragraph under a heading, a PDF page's text, a table row."""

    text: str
    kind: BlockKind = "text"
    heading_path: list[str] = Field(default_factory=list)
    page: int | None = None
    sheet: str | None = None
    row: int | None = None
    keys: dict[str, str] = Field(default_factory=dict)


class LoadedDocument(BaseModel):
    """A document as a loader returns it, before chunking."""

    doc_id: str
    source: str
    title: str
    blocks: list[Block]
    content_hash: str
    language: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    acl: list[str] = Field(default_factory=lambda: ["public"])


class Chunk(BaseModel):
    """One indexed (or expandable) piece of a document, and everything needed to explain and expand it."""

    chunk_id: str
    doc_id: str
    source: str
    title: str
    text: str
    kind: ChunkKind = "chunk"
    heading_path: list[str] = Field(default_factory=list)
    page_start: int | None = None
    page_end: int | None = None
    sheet: str | None = None
    row: int | None = None
    position: int = 0
    prev_id: str | None = None
    next_id: str | None = None
    parent_id: str | None = None
    level: int = Field(0, description="0 for leaves; parents of hierarchical chunking count up")
    window: str | None = Field(None, description="sentence-window text the generator reads instead of text")
    context: str | None = Field(
        None, description="optional LLM-written context sentence (contextual retrieval)"
    )
    keys: dict[str, str] = Field(default_factory=dict)
    acl: list[str] = Field(default_factory=lambda: ["public"])
    searchable: bool = Field(True, description="parents are stored for expansion but not searched")
    updated_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    content_hash: str = ""
    chunker: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def neighbours(self) -> list[str]:
        return [i for i in (self.prev_id, self.next_id) if i]

    @property
    def point_id(self) -> str:
        return point_id(self.chunk_id)

    def index_text(self) -> str:
        """What is embedded and BM25-indexed: title and heading path prefixed (cheap contextual retrieval)."""
        path = [self.title, *self.heading_path] if self.title else list(self.heading_path)
        # Drop a heading that merely repeats the title.
        header = " > ".join(p for i, p in enumerate(path) if p and (i == 0 or p != path[0]))
        parts = [header, self.context or "", self.text]
        return "\n".join(p for p in parts if p)

    def reading_text(self) -> str:
        """What the generator reads for this chunk."""
        return self.window or self.text


class LegScore(BaseModel):
    """Where a hit stood in one retrieval leg (for explanation and tracing)."""

    rank: int
    score: float


class Hit(BaseModel):
    """A retrieved passage: a knowledge-base chunk or a web result."""

    chunk_id: str
    doc_id: str
    text: str
    score: float = Field(description="the score of the last stage that ordered it (fusion, then rerank)")
    source: str = ""
    title: str = ""
    url: str | None = None
    origin: Literal["kb", "web"] = "kb"
    legs: dict[str, LegScore] = Field(default_factory=dict, description="'dense', 'sparse', per query")
    rerank_score: float | None = None
    expanded_from: str | None = Field(None, description="chunk id of the direct hit this piece expands")
    chunk: Chunk | None = None

    @property
    def is_direct(self) -> bool:
        return self.expanded_from is None
