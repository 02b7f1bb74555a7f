"""Build the context the generator reads from seed hits (seed 003, "构建上下文").

Rules, applied in this order, each round costing one store call (``max_steps`` bounds the rounds):
1. parent auto-merge — when ``merge_parent_min_children`` direct hits share a parent, the parent
   replaces them (it counts as a direct hit: it contains them); repeated up the hierarchy;
2. neighbours — prev/next chunks of each direct hit, ring by ring up to ``neighbours`` on each side
   (one ``store.fetch`` per ring for all seeds); sentence-window chunks read their ``window`` instead;
3. keyed rows — a direct row's ``keys`` values pull in other rows/chunks carrying the same key value
   (e.g. the order lines of an order), through one filtered scroll.
Every piece is checked against the caller's groups (nothing unreadable is ever added), de-duplicated,
grouped per document in document order, and cut to ``max_context_tokens``: direct hits first, then
expansion pieces closest to their seed; a piece is kept only if the piece it was reached through is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from core.errors import FilterError
from core.settings import ExpandSettings
from tools.knowledge_base.records import Chunk, Hit
from tools.knowledge_base.store.filters import parse_filter
from tools.search import require_groups

if TYPE_CHECKING:
    from tools.knowledge_base.knowledge_base import KnowledgeBase

DEFAULT_MAX_STEPS = 8
LINKED_ROWS_PER_SEED = 5
_PARENT_LEVELS_MAX = 8


@dataclass
class _Piece:
    chunk: Chunk
    hit: Hit | None  # the caller's hit for direct pieces
    seed_id: str | None  # None for direct pieces
    seed_rank: int
    distance: int  # 0 direct, 1 first ring / linked row, 2 second ring...
    via: str | None  # the piece this one was reached through (must be kept for this one to be kept)

    @property
    def is_direct(self) -> bool:
        return self.seed_id is None


class _Steps:
    """Counts store round trips so that expansion always terminates."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def acl_clause(groups: Sequence[str]) -> dict[str, Any]:
    """The filter clause every fetch carries: the store returns only chunks the caller may read."""
    return {"acl": {"$in": list(groups)}}


def is_readable(chunk: Chunk, groups: Sequence[str]) -> bool:
    """True when the caller's groups share a group with the chunk's ACL (checked again after every
    fetch, so a store that ignored the filter still could not leak a chunk)."""
    return bool(set(chunk.acl) & set(groups))


def expand_context(
    hits: Sequence[Hit],
    kb: KnowledgeBase,
    groups: Sequence[str],
    expand: ExpandSettings,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> list[Hit]:
    """Seed hits plus their context, as hits grouped per document in document order.

    Direct pieces keep their scores and legs (``expanded_from`` None); expansion pieces carry
    ``expanded_from=<seed chunk id>`` and the seed's score. ``text`` is what the generator should read
    (the sentence window when there is one). Web hits pass through after the knowledge-base pieces.
    At most ``max_steps`` store calls are made; ``ConfigError`` if ``groups`` is empty.
    """
    groups = require_groups(groups)
    steps = _Steps(max_steps)
    web_hits = [h for h in hits if h.origin == "web"]
    pieces = _direct_pieces([h for h in hits if h.origin == "kb"], kb, groups, steps)
    merged_parents = _merge_parents(pieces, kb, groups, expand.merge_parent_min_children, steps)
    _add_neighbours(pieces, kb, groups, expand.neighbours, merged_parents, steps)
    _add_keyed_rows(pieces, kb, groups, steps)
    _drop_contained(pieces)
    kept = _cap_tokens(pieces, kb, expand.max_context_tokens, web_hits)
    return [_to_hit(p, pieces) for p in _document_order(kept)] + web_hits


def _direct_pieces(
    hits: Sequence[Hit], kb: KnowledgeBase, groups: list[str], steps: _Steps
) -> dict[str, _Piece]:
    """The caller's hits as pieces, best first, de-duplicated; chunks missing on a hit are fetched."""
    unique: dict[str, Hit] = {}
    for hit in hits:
        unique.setdefault(hit.chunk_id, hit)
    missing = [cid for cid, h in unique.items() if h.chunk is None]
    fetched: dict[str, Chunk] = {}
    if missing and steps.take():
        fetched = {c.chunk_id: c for c in kb.store.fetch(missing, filter=acl_clause(groups))}
    pieces: dict[str, _Piece] = {}
    for rank, (chunk_id, hit) in enumerate(unique.items()):
        chunk = hit.chunk or fetched.get(chunk_id)
        # A hit the caller may not read (e.g. an id passed to a tool) is dropped, not expanded.
        if chunk is None or not is_readable(chunk, groups):
            continue
        pieces[chunk_id] = _Piece(chunk, hit, None, rank, 0, None)
    return pieces


def _merge_parents(
    pieces: dict[str, _Piece], kb: KnowledgeBase, groups: list[str], min_children: int, steps: _Steps
) -> set[str]:
    """Replace groups of direct siblings by their parent, level by level; returns merged parent ids."""
    merged: set[str] = set()
    for _ in range(_PARENT_LEVELS_MAX):
        by_parent: dict[str, list[_Piece]] = {}
        for piece in pieces.values():
            if piece.is_direct and piece.chunk.parent_id and piece.chunk.parent_id not in pieces:
                by_parent.setdefault(piece.chunk.parent_id, []).append(piece)
        wanted = [pid for pid, kids in by_parent.items() if len(kids) >= min_children]
        if not wanted or not steps.take():
            break
        progressed = False
        for parent in kb.store.fetch(wanted, filter=acl_clause(groups)):
            if not is_readable(parent, groups):
                continue
            kids = sorted(by_parent[parent.chunk_id], key=lambda p: p.seed_rank)
            for kid in kids:
                del pieces[kid.chunk.chunk_id]
            best = kids[0]
            pieces[parent.chunk_id] = _Piece(parent, best.hit, None, best.seed_rank, 0, None)
            merged.add(parent.chunk_id)
            progressed = True
        if not progressed:
            break
    return merged


def _add_neighbours(
    pieces: dict[str, _Piece],
    kb: KnowledgeBase,
    groups: list[str],
    window: int,
    merged_parents: set[str],
    steps: _Steps,
) -> None:
    """Walk prev/next links ring by ring (one fetch per ring for every seed and direction)."""
    # (the chunk to step from, direction, seed piece)
    frontier: list[tuple[Chunk, str, _Piece]] = []
    for piece in list(pieces.values()):
        # Merged parents already hold their surroundings; sentence-window chunks read their window.
        if piece.is_direct and piece.chunk.chunk_id not in merged_parents and piece.chunk.window is None:
            frontier += [(piece.chunk, "prev_id", piece), (piece.chunk, "next_id", piece)]
    for distance in range(1, window + 1):
        wanted: dict[str, list[tuple[Chunk, str, _Piece]]] = {}
        for chunk, direction, seed in frontier:
            next_id = getattr(chunk, direction)
            if next_id and next_id not in pieces:
                wanted.setdefault(next_id, []).append((chunk, direction, seed))
        if not wanted or not steps.take():
            return
        frontier = []
        for neighbour in kb.store.fetch(list(wanted), filter=acl_clause(groups)):
            if not is_readable(neighbour, groups) or neighbour.parent_id in merged_parents:
                continue  # never walk through what the caller may not read, nor into a merged parent
            came_from = wanted[neighbour.chunk_id]
            from_chunk, direction, seed = min(came_from, key=lambda item: item[2].seed_rank)
            if neighbour.chunk_id not in pieces:
                pieces[neighbour.chunk_id] = _Piece(
                    neighbour, None, seed.chunk.chunk_id, seed.seed_rank, distance, from_chunk.chunk_id
                )
            frontier += [(neighbour, d, s) for _, d, s in came_from]


def _add_keyed_rows(pieces: dict[str, _Piece], kb: KnowledgeBase, groups: list[str], steps: _Steps) -> None:
    """Rows and chunks of any table sharing a key value with a direct row hit (one scroll)."""
    wanted: dict[tuple[str, str], _Piece] = {}
    for piece in sorted(pieces.values(), key=lambda p: p.seed_rank):
        if piece.is_direct and piece.chunk.kind == "row":
            for name, value in piece.chunk.keys.items():
                wanted.setdefault((name, value), piece)
    clauses = []
    for name, value in wanted:
        clause = {f"keys.{name}": value}
        try:
            parse_filter(clause)
        except FilterError:
            continue  # a column name the filter syntax cannot address; skip that key, keep the others
        clauses.append(clause)
    if not clauses or not steps.take():
        return
    link_filter: dict[str, Any] = {"$and": [{"$or": clauses}, acl_clause(groups)]}
    limit = LINKED_ROWS_PER_SEED * len({p.chunk.chunk_id for p in wanted.values()})
    added_per_seed: dict[str, int] = {}
    for chunk in islice(kb.store.scroll(link_filter, limit=limit), limit + len(pieces)):
        if chunk.chunk_id in pieces or not is_readable(chunk, groups):
            continue
        seeds = [wanted[(n, v)] for n, v in chunk.keys.items() if (n, v) in wanted]
        if not seeds:
            continue
        seed = min(seeds, key=lambda p: p.seed_rank)
        count = added_per_seed.get(seed.chunk.chunk_id, 0)
        if count >= LINKED_ROWS_PER_SEED:
            continue
        added_per_seed[seed.chunk.chunk_id] = count + 1
        pieces[chunk.chunk_id] = _Piece(
            chunk, None, seed.chunk.chunk_id, seed.seed_rank, 1, seed.chunk.chunk_id
        )


def _drop_contained(pieces: dict[str, _Piece]) -> None:
    """Drop a piece whose reading text lies inside another piece of the same document (overlapping
    sentence windows, duplicated rows): the generator would read it twice. The better piece stays;
    a direct hit never gives way to an expansion."""
    order = sorted(pieces.values(), key=lambda p: (not p.is_direct, p.seed_rank, p.distance))
    for i, piece in enumerate(order):
        text = piece.chunk.reading_text().strip()
        if not text:
            continue
        for j, other in enumerate(order):
            if (
                other is piece
                or other.chunk.chunk_id not in pieces
                or other.chunk.doc_id != piece.chunk.doc_id
            ):
                continue
            other_text = other.chunk.reading_text().strip()
            strictly_larger = len(other_text) > len(text)
            if text not in other_text or not (strictly_larger or j < i):
                continue
            if piece.is_direct and not other.is_direct:
                continue
            del pieces[piece.chunk.chunk_id]
            break


def _cap_tokens(
    pieces: dict[str, _Piece], kb: KnowledgeBase, budget: int, web_hits: Sequence[Hit]
) -> list[_Piece]:
    """Keep pieces by priority within ``budget`` tokens: direct hits by rank, then expansions nearest
    their seed first. The best direct hit is always kept."""
    used = sum(kb.embedder.count_tokens(h.text) for h in web_hits)
    kept: dict[str, _Piece] = {}
    ordered = sorted(
        pieces.values(), key=lambda p: (not p.is_direct, p.distance, p.seed_rank, p.chunk.position)
    )
    for piece in ordered:
        if not piece.is_direct and piece.via not in kept:
            continue
        tokens = kb.embedder.count_tokens(piece.chunk.reading_text())
        if used + tokens <= budget or not kept:
            kept[piece.chunk.chunk_id] = piece
            used += tokens
    return list(kept.values())


def _document_order(pieces: list[_Piece]) -> list[_Piece]:
    """Documents ordered by their best seed (documents holding a direct hit first on ties); pieces
    inside a document in document order."""
    by_doc: dict[str, list[_Piece]] = {}
    for piece in pieces:
        by_doc.setdefault(piece.chunk.doc_id, []).append(piece)

    def doc_key(doc_pieces: list[_Piece]) -> tuple[int, bool]:
        return (min(p.seed_rank for p in doc_pieces), not any(p.is_direct for p in doc_pieces))

    ordered: list[_Piece] = []
    for doc_pieces in sorted(by_doc.values(), key=doc_key):
        ordered += sorted(
            doc_pieces, key=lambda p: (p.chunk.page_start or 0, p.chunk.position, -p.chunk.level)
        )
    return ordered


def _to_hit(piece: _Piece, pieces: dict[str, _Piece]) -> Hit:
    chunk = piece.chunk
    if piece.is_direct and piece.hit is not None:
        return piece.hit.model_copy(
            update={
                "chunk_id": chunk.chunk_id,
                "doc_id": chunk.doc_id,
                "text": chunk.reading_text(),
                "source": chunk.source,
                "title": chunk.title,
                "chunk": chunk,
            }
        )
    seed = pieces.get(piece.seed_id or "")
    seed_score = seed.hit.score if seed is not None and seed.hit is not None else 0.0
    return Hit(
        chunk_id=chunk.chunk_id,
        doc_id=chunk.doc_id,
        text=chunk.reading_text(),
        score=seed_score,
        source=chunk.source,
        title=chunk.title,
        expanded_from=piece.seed_id,
        chunk=chunk,
    )
