"""What every chunking method shares: the ``Chunker`` interface, and turning its draft chunks and
the document's table blocks into ``Chunk`` records with ids, pages, neighbours, positions, and the
document summary.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.settings import ChunkingSettings
from tools.knowledge_base.chunkers._units import DocumentUnits, TokenCounter, Unit, join_units
from tools.knowledge_base.records import Chunk, LoadedDocument, content_hash

# Extractive document summaries stay around this many tokens.
SUMMARY_TOKENS = 120
_SUMMARY_SENTENCES_PER_SECTION = 2


def common_prefix(paths: Sequence[Sequence[str]]) -> list[str]:
    if not paths:
        return []
    prefix = list(paths[0])
    for path in paths[1:]:
        length = 0
        while length < min(len(prefix), len(path)) and prefix[length] == path[length]:
            length += 1
        prefix = prefix[:length]
    return prefix


class Chunker(ABC):
    """One chunking method. ``chunk_sections`` drafts the text chunks; table rows, ids, neighbours,
    positions and the summary are added by ``finish_chunks`` the same way for every method."""

    #: recorded on every chunk it makes, and part of the chunk ids
    name: str

    def __init__(self, settings: ChunkingSettings, counter: TokenCounter) -> None:
        self.settings = settings
        self.counter = counter

    @property
    def max_unit_tokens(self) -> int:
        """No single unit may exceed this many content tokens (sentences beyond it are sliced)."""
        return self.counter.content_budget(self.settings.chunk_tokens)

    @abstractmethod
    def chunk_sections(self, units: DocumentUnits) -> list[DraftChunk]:
        """Draft chunks of the text sections, in document order (parents before their children)."""


@dataclass
class DraftChunk:
    """A chunk before ids and neighbours are assigned."""

    units: list[Unit]
    level: int = 0
    window: str | None = None
    children: list[DraftChunk] = field(default_factory=list)

    @property
    def sections(self) -> list[int]:
        return sorted({u.section for u in self.units})


def finish_chunks(
    doc: LoadedDocument,
    units: DocumentUnits,
    drafts: list[DraftChunk],
    method: str,
    counter: TokenCounter,
) -> list[Chunk]:
    """Turn draft chunks and table blocks into Chunk records (ids, pages, neighbours, positions) and
    append the document summary."""
    updated_at = datetime.now(UTC)
    paths = {s.index: s.heading_path for s in units.sections}

    def record(text: str, **fields: Any) -> Chunk:
        return Chunk(
            doc_id=doc.doc_id,
            source=doc.source,
            title=doc.title,
            text=text,
            acl=list(doc.acl),
            metadata=dict(doc.metadata),
            updated_at=updated_at,
            content_hash=content_hash(text),
            chunker=method,
            **fields,
        )

    # (document-order key, chunk, neighbour group): neighbours are linked within one group.
    records: list[tuple[tuple[int, int], Chunk, _Group]] = []
    serial = 0

    def add_draft(draft: DraftChunk, parent_id: str | None) -> None:
        nonlocal serial
        chunk_id = f"{doc.doc_id}::{method}::{serial}"
        serial += 1
        pages = [u.page for u in draft.units if u.page is not None]
        text = join_units(draft.units)
        chunk = record(
            text,
            chunk_id=chunk_id,
            kind="parent" if draft.children else "chunk",
            heading_path=common_prefix([paths[s] for s in draft.sections]),
            page_start=min(pages) if pages else None,
            page_end=max(pages) if pages else None,
            parent_id=parent_id,
            level=draft.level,
            window=draft.window,
            searchable=not draft.children,
        )
        # A parent sorts before its first child: same first unit, higher level.
        records.append(
            ((draft.units[0].ordinal, -draft.level), chunk, _Group("section", frozenset(draft.sections)))
        )
        for child in draft.children:
            add_draft(child, chunk_id)

    for draft in drafts:
        add_draft(draft, None)

    for ordinal, block in units.table_blocks:
        sheet = block.sheet or ""
        if block.kind == "table_row":
            chunk = record(
                block.text,
                chunk_id=f"{doc.doc_id}::row::{sheet}::{block.row}",
                kind="row",
                heading_path=list(block.heading_path),
                sheet=block.sheet,
                row=block.row,
                keys=dict(block.keys),
                page_start=block.page,
                page_end=block.page,
            )
            group = _Group("sheet", frozenset([sheet]))
        else:
            chunk = record(
                block.text,
                chunk_id=f"{doc.doc_id}::sheet::{sheet}",
                kind="sheet_summary",
                heading_path=list(block.heading_path),
                sheet=block.sheet,
            )
            group = _Group("alone", frozenset([ordinal]))
        records.append(((ordinal, 0), chunk, group))

    records.sort(key=lambda r: r[0])
    _link_neighbours(records)
    chunks = [c for _, c, _ in records]
    _assign_positions(chunks)
    chunks.append(_summary_chunk(doc, units, len(chunks), counter, record))
    return chunks


@dataclass(frozen=True)
class _Group:
    kind: str
    members: frozenset

    def adjoins(self, other: _Group) -> bool:
        """Text chunks sharing a section, or rows of one sheet, are neighbours."""
        return self.kind == other.kind != "alone" and bool(self.members & other.members)


def _link_neighbours(records: list[tuple[tuple[int, int], Chunk, _Group]]) -> None:
    """prev_id/next_id between consecutive chunks of one level in the same section (or sheet)."""
    last_by_level: dict[int, tuple[Chunk, _Group]] = {}
    for _, chunk, group in records:
        previous = last_by_level.get(chunk.level)
        if previous is not None and previous[1].adjoins(group):
            previous[0].next_id = chunk.chunk_id
            chunk.prev_id = previous[0].chunk_id
        last_by_level[chunk.level] = (chunk, group)


def _assign_positions(chunks: list[Chunk]) -> None:
    """0..n-1 in document order, per level."""
    next_position: dict[int, int] = {}
    for chunk in chunks:
        chunk.position = next_position.get(chunk.level, 0)
        next_position[chunk.level] = chunk.position + 1


def _summary_chunk(
    doc: LoadedDocument,
    units: DocumentUnits,
    n_chunks: int,
    counter: TokenCounter,
    record: Callable[..., Chunk],
) -> Chunk:
    """The document's gatekeeper record (seed 003): not searchable, and carrying the DOCUMENT's
    content hash, which the ingest pipeline reads back to recognise unchanged documents."""
    summary = record(
        extractive_summary(doc, units, counter),
        chunk_id=f"{doc.doc_id}::summary",
        kind="summary",
        searchable=False,
    )
    summary.content_hash = doc.content_hash
    summary.metadata = {**doc.metadata, "n_chunks": n_chunks}
    return summary


def extractive_summary(doc: LoadedDocument, units: DocumentUnits, counter: TokenCounter) -> str:
    """Title, then each sheet's shape (columns, rows), the section headings, and the first sentences
    of the first sections, within about SUMMARY_TOKENS tokens."""
    lines = [doc.title]
    budget = SUMMARY_TOKENS - counter.cost(doc.title)
    sheet_lines = [b.text.split("\n", 1)[0] for _, b in units.table_blocks if b.kind == "table_summary"]
    for line in sheet_lines:
        lines.append(line)
        budget -= counter.cost(line)
    headings = list(
        dict.fromkeys(
            s.heading_path[-1] for s in units.sections if s.heading_path and s.heading_path[-1] != doc.title
        )
    )
    if headings:
        heading_line = "Sections: " + "; ".join(headings)
        heading_cost = counter.cost(heading_line)
        if heading_cost > budget // 2:
            heading_line = "Sections: " + "; ".join(headings[:8])
            heading_cost = counter.cost(heading_line)
        lines.append(heading_line)
        budget -= heading_cost
    picked: list[str] = []
    for section in units.sections:
        for unit in [u for u in section.units if not u.is_code][:_SUMMARY_SENTENCES_PER_SECTION]:
            if unit.tokens > budget:
                break
            picked.append(unit.text)
            budget -= unit.tokens
        if budget <= 0:
            break
    if picked:
        lines.append(" ".join(picked))
    return "\n".join(lines)
