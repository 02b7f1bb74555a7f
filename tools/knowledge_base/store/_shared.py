"""What both Qdrant backends share: payload layout, index metadata, visibility filters, hit assembly."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from tools.knowledge_base.records import Chunk, point_id
from tools.knowledge_base.store.base import (
    DocumentState,
    FilterInput,
    IndexIdentity,
    StoredHit,
)
from tools.knowledge_base.store.filters import AndFilter, MatchCondition, parse_filter

UPSERT_BATCH = 256
SCROLL_PAGE = 1000

# Payload indexes created with the collection (field -> kind): the fields every read or commit filters on.
# Each index costs a write pass at creation, so only these.
INDEXED_FIELDS: dict[str, str] = {
    "doc_id": "keyword",
    "chunk_id": "keyword",
    "source": "keyword",
    "acl": "keyword",
    "kind": "keyword",
    "committed": "bool",
    "updated_at": "datetime",
}

# Fields the store adds to a chunk's payload (not part of ``Chunk``).
STORE_FIELDS = ("committed", "committed_at", "doc_version", "ingest_signature")
SUMMARY_FIELDS = ["doc_id", "source", "content_hash", "doc_version", "ingest_signature", "committed_at"]


def read_identity(path: Path) -> IndexIdentity | None:
    if not path.exists():
        return None
    try:
        return IndexIdentity.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"index metadata {path} is unreadable ({exc}); delete the index directory") from exc


def write_identity(path: Path, identity: IndexIdentity) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(identity.as_dict(), indent=2), encoding="utf-8")
    os.replace(tmp, path)


def versioned_point_id(chunk_id: str, doc_version: str) -> str:
    """Point ids are per version, so a new version is written beside the old one (which stays whole and
    visible) until ``commit_document`` swaps them; chunks are fetched by their ``chunk_id`` payload."""
    return point_id(f"{chunk_id}@{doc_version}")


def commit_payload() -> dict[str, Any]:
    # committed_at orders versions if a crash ever leaves two committed (see stale_points).
    return {"committed": True, "committed_at": time.time()}


def chunk_payload(chunk: Chunk, doc_version: str, ingest_signature: str) -> dict[str, Any]:
    payload = chunk.model_dump(mode="json")
    payload.update(committed=False, doc_version=doc_version, ingest_signature=ingest_signature)
    return payload


def chunk_from_payload(payload: dict[str, Any]) -> Chunk:
    return Chunk.model_validate({k: v for k, v in payload.items() if k not in STORE_FIELDS})


def visible(filter: FilterInput) -> AndFilter:
    """``filter`` restricted to committed points: what every read goes through."""
    user = parse_filter(filter)
    committed = MatchCondition(field="committed", value=True)
    return AndFilter(conditions=[user, committed] if user else [committed])


def doc_condition(doc_id: str) -> MatchCondition:
    return MatchCondition(field="doc_id", value=doc_id)


def hybrid_hits(
    fused: Sequence[tuple[str, float, dict[str, Any]]],
    dense_leg: Sequence[tuple[str, float]],
    sparse_leg: Sequence[tuple[str, float]],
) -> list[StoredHit]:
    """StoredHits of a fused result, each with its 1-based rank and raw score in the legs that found it.

    Items are (point id, score[, payload]) as strings, so both engines' id types compare equal.
    """
    legs = {"dense": _ranks(dense_leg), "sparse": _ranks(sparse_leg)}
    hits = []
    for pid, score, payload in fused:
        found = {name: ranks[pid] for name, ranks in legs.items() if pid in ranks}
        hits.append(StoredHit(chunk=chunk_from_payload(payload), score=score, legs=found))
    return hits


def single_leg_hits(leg: str, results: Sequence[tuple[str, float, dict[str, Any]]]) -> list[StoredHit]:
    return [
        StoredHit(chunk=chunk_from_payload(payload), score=score, legs={leg: (rank, score)})
        for rank, (_pid, score, payload) in enumerate(results, start=1)
    ]


def _ranks(leg: Sequence[tuple[str, float]]) -> dict[str, tuple[int, float]]:
    return {pid: (rank, score) for rank, (pid, score) in enumerate(leg, start=1)}


def in_asked_order(chunks: Iterable[Chunk], asked: Sequence[str]) -> list[Chunk]:
    by_id = {c.chunk_id: c for c in chunks}
    return [by_id[i] for i in dict.fromkeys(asked) if i in by_id]


def document_states(summaries: Iterable[dict[str, Any]], counts: dict[str, int]) -> dict[str, DocumentState]:
    """DocumentStates from committed summary payloads; of two committed versions (a crash between the two
    writes of ``commit_document``), the later commit is the document."""
    newest: dict[str, dict[str, Any]] = {}
    for payload in summaries:
        doc_id = payload["doc_id"]
        if doc_id not in newest or payload.get("committed_at", 0) > newest[doc_id].get("committed_at", 0):
            newest[doc_id] = payload
    return {
        doc_id: DocumentState(
            doc_id=doc_id,
            source=p.get("source", ""),
            content_hash=p.get("content_hash", ""),
            doc_version=p.get("doc_version", ""),
            chunks=counts.get(doc_id, 0),
            ingest_signature=p.get("ingest_signature") or "",
        )
        for doc_id, p in newest.items()
    }


def stale_points(versions: dict[str, str], points: Iterable[tuple[str, str, str]]) -> list[str]:
    """Committed point ids that are not their document's current version, given that version per
    document (``documents()``) and (point id, doc_id, doc_version) of every committed point: the old
    version a crash between the two writes of ``commit_document`` left, or chunks of a document whose
    summary is missing."""
    return [pid for pid, doc_id, version in points if versions.get(doc_id) != version]
