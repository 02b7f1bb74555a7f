"""Ingestion: files → documents → chunks → vectors → the store, incrementally and crash-safely.

One run:
1. ``purge_uncommitted()``: whatever an interrupted earlier run left half-written is removed.
2. Candidate files are loaded one at a time, as the pipeline needs more documents (so reading
   overlaps embedding and memory holds only the files in flight); a document whose content hash and
   chunking settings match the stored one is unchanged and costs nothing more (no chunking, no embedding).
3. New and changed documents are chunked; their searchable chunks are embedded through the embedding
   cache in batches that span documents (the embedder is the bottleneck, and small documents would
   otherwise leave batches half empty), in a worker thread one group ahead, so chunking and writing
   overlap with embedding; each document is then upserted uncommitted and committed, in input order,
   which makes the new version visible and deletes the old one.
4. With ``prune``, documents whose file is gone, and records no longer in a re-ingested file, are removed.

Bad input (an unreadable file, a document the chunker rejects) is skipped with its reason; only a
broken store or configuration aborts the run. Ctrl-C stops between documents: what was committed stays,
nothing half-written is visible.
"""

from __future__ import annotations

import hashlib
import json
import logging
import signal
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from core.errors import IngestError, ProviderUnavailable
from core.settings import ChunkingSettings, Settings
from tools.knowledge_base.chunkers.factory import chunk_document
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.knowledge_base.loaders.factory import iter_candidate_files, load_file
from tools.knowledge_base.records import Chunk, LoadedDocument
from tools.knowledge_base.store.base import DocumentState

logger = logging.getLogger(__name__)

#: groups embedded ahead of the one being written: enough to keep the embedder busy, and no more
EMBED_AHEAD_GROUPS = 1


class SkippedInput(BaseModel):
    source: str
    reason: str


class IngestReport(BaseModel):
    """What one ingest run did. ``embedded`` counts texts actually run through the embedder (cache misses)."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[SkippedInput] = Field(default_factory=list)
    removed: int = 0
    chunks_written: int = 0
    embedded: int = 0
    seconds: float = 0.0
    files: int = 0
    warnings: list[str] = Field(default_factory=list)
    recovered_points: int = Field(0, description="points of an interrupted earlier run removed at start")
    interrupted: bool = False

    @property
    def indexed(self) -> int:
        return self.added + self.updated

    @property
    def completed_anything(self) -> bool:
        """True unless every input failed: something was indexed, found unchanged, or removed."""
        return bool(self.added or self.updated or self.unchanged or self.removed)


def ingest_signature(document: LoadedDocument, chunking: ChunkingSettings) -> str:
    """A fingerprint of what shapes a document's stored points besides its content: the chunking
    settings, its ACL, title and metadata. A document whose signature changed is re-indexed even if its
    bytes did not (new ACL groups from a sidecar or ``--acl`` must reach every chunk)."""
    canonical = json.dumps(
        {
            "chunking": chunking.model_dump(mode="json"),
            "acl": sorted(document.acl),
            "title": document.title,
            "metadata": document.metadata,
        },
        sort_keys=True,
        default=str,
    )
    return f"{chunking.method}-{hashlib.sha256(canonical.encode()).hexdigest()[:16]}"


@dataclass
class _FileTally:
    """How many of one file's documents are still to be written, for the progress bar's file count."""

    left: int = 0
    loaded: bool = False  # every document of the file has been handed to the pipeline


@dataclass
class _PendingDocument:
    document: LoadedDocument
    chunks: list[Chunk]
    change: Literal["added", "updated"]
    tally: _FileTally
    searchable: list[int] = field(default_factory=list)  # indexes of chunks that get vectors
    vectors: np.ndarray | None = None  # one row per searchable chunk, once embedded


class _StopFlag:
    """Set by the first Ctrl-C so the run stops between documents; a second Ctrl-C interrupts at once."""

    def __init__(self) -> None:
        self.requested = False

    @contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_sigint(signum: int, frame: object) -> None:
            if self.requested:
                raise KeyboardInterrupt
            self.requested = True
            logger.warning(
                "interrupt: finishing the current batch, then stopping (Ctrl-C again to abort now)"
            )

        previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


def ingest(
    paths: Sequence[Path | str],
    settings: Settings,
    *,
    prune: bool = False,
    acl: list[str] | None = None,
    progress: bool = True,
    kb: KnowledgeBase | None = None,
) -> IngestReport:
    """Ingest files and directories into the knowledge base of ``settings`` (or ``kb``) and report.

    Never raises for bad input (it is reported in ``skipped``); a broken configuration, store or
    embedder raises (ConfigError, ProviderUnavailable, or the store's own error).
    """
    started = time.perf_counter()
    report = IngestReport()
    owns_kb = kb is None
    kb = kb or KnowledgeBase.open(settings)
    stop = _StopFlag()
    try:
        with stop.installed(), _Progress(enabled=progress) as bar:
            report.recovered_points = kb.store.purge_uncommitted()
            stored = kb.store.documents()

            # Files are read one at a time as the pipeline asks for documents (reading overlaps
            # embedding, and only the documents of the files in flight are held); documents that need
            # (re)indexing are chunked, embedded in cross-document batches, upserted and committed.
            files = _candidate_files(paths, report)
            report.files = len(files)
            loaded_by_source: dict[str, set[str]] = {}
            bar.start_phase("indexing", total=len(files), unit="files")
            pending = _pending_documents(files, settings, acl, stored, report, loaded_by_source, bar, stop)
            groups = _batches_of_documents(pending, settings, kb, report, bar)
            _index_pipelined(groups, kb, settings, report, bar, stop)

            if prune and not stop.requested:
                report.removed += _prune(kb, stored, loaded_by_source)
            report.interrupted = stop.requested
    except KeyboardInterrupt:
        # A second Ctrl-C: the document being written stays uncommitted (invisible) and is purged next run.
        report.interrupted = True
    finally:
        try:
            kb.store.flush()
        finally:
            if owns_kb:
                kb.close()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _pending_documents(
    files: Sequence[Path],
    settings: Settings,
    acl: list[str] | None,
    stored: dict[str, DocumentState],
    report: IngestReport,
    loaded_by_source: dict[str, set[str]],
    bar: _Progress,
    stop: _StopFlag,
) -> Iterator[_PendingDocument]:
    """Load each file when the pipeline needs more documents; yield those that need (re)indexing."""
    seen: dict[str, str] = {}
    for path in files:
        if stop.requested:
            return
        source = path.absolute().as_posix()
        try:
            documents = load_file(path, settings, acl=acl, warnings=report.warnings)
        except IngestError as exc:
            report.skipped.append(SkippedInput(source=exc.source, reason=exc.reason))
            bar.advance()
            continue
        loaded_by_source[source] = {d.doc_id for d in documents}
        tally = _FileTally()
        for document in documents:
            if document.doc_id in seen:
                report.skipped.append(
                    SkippedInput(
                        source=document.source,
                        reason=f"duplicate doc_id {document.doc_id!r} (first read from {seen[document.doc_id]})",
                    )
                )
                continue
            seen[document.doc_id] = document.source
            if _owned_elsewhere(document, stored.get(document.doc_id)):
                report.skipped.append(
                    SkippedInput(
                        source=document.source,
                        reason=f"doc_id {document.doc_id!r} belongs to another file of this knowledge "
                        "base; a document is replaced only from the file that created it (not replaced)",
                    )
                )
                continue
            change = _change_of(document, stored.get(document.doc_id), settings.chunking)
            if change == "unchanged":
                report.unchanged += 1
            else:
                tally.left += 1
                yield _PendingDocument(document=document, chunks=[], change=change, tally=tally)
        tally.loaded = True
        if tally.left == 0:
            bar.advance()  # nothing of this file needs indexing (or all of it is already done)


def _finished(item: _PendingDocument, bar: _Progress, chunks: int = 0) -> None:
    """One pending document is written or skipped; its file's step completes with its last document."""
    bar.advance(chunks=chunks, documents=1, steps=0)
    item.tally.left -= 1
    if item.tally.left == 0 and item.tally.loaded:
        bar.advance()


def _candidate_files(paths: Sequence[Path | str], report: IngestReport) -> list[Path]:
    """Supported files under ``paths``, once each; missing paths and unsupported files go to ``skipped``."""
    files: dict[Path, None] = {}
    for given in paths:
        problems: list[IngestError] = []
        try:
            supported, unsupported = iter_candidate_files([given], problems)
        except IngestError as exc:
            problems.append(exc)
            supported, unsupported = [], []
        report.skipped.extend(SkippedInput(source=p.source, reason=p.reason) for p in problems)
        files.update(dict.fromkeys(supported))
        for path in unsupported:
            report.skipped.append(SkippedInput(source=path.as_posix(), reason="unsupported file type"))
    return list(files)


def _owned_elsewhere(document: LoadedDocument, stored: DocumentState | None) -> bool:
    """True when ``document`` would replace a stored document that another, still present file created.

    A document's identity belongs to its source: a JSONL ``_id`` or an upload can never take over a
    document of another file (another tenant's upload, say). A file that is gone (moved, renamed) no
    longer owns its documents, as for ``--prune``, so moving a file and ingesting it again still works.
    """
    if stored is None or not stored.source or stored.source == document.source:
        return False
    return not _source_gone(stored.source)


def _source_gone(source: str) -> bool:
    """The file a stored document came from no longer exists: it owns nothing (--prune drops its documents)."""
    return bool(source) and Path(source).is_absolute() and not Path(source).exists()


def _change_of(
    document: LoadedDocument, stored: DocumentState | None, chunking: ChunkingSettings
) -> Literal["added", "updated", "unchanged"]:
    if stored is None:
        return "added"
    # A moved file's documents are written again under their new source (the embedding cache serves
    # their vectors), so that --prune, which drops documents whose file is gone, keeps them.
    unchanged = (
        stored.content_hash == document.content_hash
        and stored.ingest_signature == ingest_signature(document, chunking)
        and stored.source == document.source
    )
    return "unchanged" if unchanged else "updated"


def _batches_of_documents(
    pending: Iterable[_PendingDocument],
    settings: Settings,
    kb: KnowledgeBase,
    report: IngestReport,
    bar: _Progress,
) -> Iterator[list[_PendingDocument]]:
    """Chunk documents lazily and group them so each group fills at least one embedding batch."""
    group: list[_PendingDocument] = []
    texts_in_group = 0
    for item in pending:
        try:
            item.chunks = chunk_document(item.document, settings.chunking, kb.embedder.count_tokens)
        except Exception as exc:  # noqa: BLE001 - one document the chunker cannot cut must not stop the run
            report.skipped.append(
                SkippedInput(
                    source=item.document.source, reason=f"chunking failed ({type(exc).__name__}: {exc})"
                )
            )
            _finished(item, bar)
            continue
        item.searchable = [i for i, c in enumerate(item.chunks) if c.searchable]
        group.append(item)
        texts_in_group += len(item.searchable)
        if texts_in_group >= settings.ingest.embed_batch_size:
            yield group
            group, texts_in_group = [], 0
    if group:
        yield group


def _index_pipelined(
    groups: Iterable[list[_PendingDocument]],
    kb: KnowledgeBase,
    settings: Settings,
    report: IngestReport,
    bar: _Progress,
    stop: _StopFlag,
) -> None:
    """Embed each group in a worker thread while this one reads and chunks the next and writes the last.

    The embedder's native code releases the GIL, so chunking, BM25 encoding and upserting overlap with
    it instead of leaving its cores idle in between. At most ``EMBED_AHEAD_GROUPS`` groups wait embedded
    or in flight, so memory stays bounded; documents are still written and committed in input order.
    """
    in_flight: deque[tuple[list[_PendingDocument], Future[None]]] = deque()
    embedding = ThreadPoolExecutor(1, thread_name_prefix="ingest-embed")

    def write_oldest() -> None:
        group, future = in_flight.popleft()
        future.result()  # re-raises ProviderUnavailable or a store error from the worker
        _write_group(group, kb, settings, report, bar, stop)

    try:
        for group in groups:
            if stop.requested:
                break
            in_flight.append((group, embedding.submit(_embed_group, group, kb, settings, report)))
            while len(in_flight) > EMBED_AHEAD_GROUPS:
                write_oldest()
        while in_flight and not stop.requested:
            write_oldest()
    finally:
        # An error or an interrupt: groups not yet written are dropped (they are simply not indexed
        # and the next run picks them up); the one being embedded finishes first.
        embedding.shutdown(wait=True, cancel_futures=True)


def _write_group(
    group: list[_PendingDocument],
    kb: KnowledgeBase,
    settings: Settings,
    report: IngestReport,
    bar: _Progress,
    stop: _StopFlag,
) -> None:
    for item in group:
        if stop.requested:
            return
        if item.vectors is None:
            _finished(item, bar)  # its embedding failed and it was reported as skipped
            continue
        dense = np.zeros((len(item.chunks), kb.embedder.dim), np.float32)
        dense[item.searchable] = item.vectors
        sparse = [kb.sparse.encode_document(c.index_text()) if c.searchable else None for c in item.chunks]
        version = uuid.uuid4().hex
        kb.store.upsert(
            item.chunks, dense, sparse, version, ingest_signature(item.document, settings.chunking)
        )
        kb.store.commit_document(item.document.doc_id, version)
        report.chunks_written += len(item.chunks)
        if item.change == "added":
            report.added += 1
        else:
            report.updated += 1
        _finished(item, bar, chunks=len(item.chunks))


def _embed_group(
    group: list[_PendingDocument], kb: KnowledgeBase, settings: Settings, report: IngestReport
) -> None:
    """Set ``vectors`` of each document (its searchable chunks' rows) through the embedding cache, in one
    run of batches for the whole group. If that fails on some input, the documents are embedded one at a
    time so only the offending ones are skipped (their ``vectors`` stay None)."""
    try:
        texts = [item.chunks[i].index_text() for item in group for i in item.searchable]
        matrix, embedded = kb.embed_cache.embed(
            texts, kb.embedder.embed_passages, settings.ingest.embed_batch_size
        )
    except ProviderUnavailable:
        raise  # the embedder itself is down: nothing else can be indexed either
    except Exception as exc:  # noqa: BLE001 - isolate the document the embedder rejects
        if len(group) == 1:
            reason = f"embedding failed ({type(exc).__name__}: {exc})"
            report.skipped.append(SkippedInput(source=group[0].document.source, reason=reason))
            return
        for item in group:
            _embed_group([item], kb, settings, report)
        return
    report.embedded += embedded
    start = 0
    for item in group:
        item.vectors = matrix[start : start + len(item.searchable)]
        start += len(item.searchable)


def _prune(kb: KnowledgeBase, stored: dict[str, DocumentState], loaded_by_source: dict[str, set[str]]) -> int:
    """Remove documents whose source file is gone, and documents of a file read in this run that the file
    no longer contains (records dropped from a JSONL corpus)."""
    removed = 0
    for doc_id, state in stored.items():
        source = state.source
        gone = _source_gone(source)
        dropped = source in loaded_by_source and doc_id not in loaded_by_source[source]
        if gone or dropped:
            kb.store.delete_document(doc_id)
            removed += 1
    return removed


class _Progress:
    """A rich progress bar on stderr (files, documents written, chunks, chunks/s, ETA), or nothing."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None
        self._chunks = 0
        self._documents = 0
        self._phase_started = time.perf_counter()

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(
                    "{task.fields[unit]} · {task.fields[docs]} docs · {task.fields[chunks]} chunks · "
                    "{task.fields[rate]} chunks/s"
                ),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)

    def start_phase(self, description: str, total: int, unit: str) -> None:
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.update(self._task, visible=False)
        self._chunks = self._documents = 0
        self._phase_started = time.perf_counter()
        self._task = self._progress.add_task(description, total=total, unit=unit, docs=0, chunks=0, rate="-")

    def advance(self, chunks: int = 0, documents: int = 0, steps: int = 1) -> None:
        if self._progress is None or self._task is None:
            return
        self._chunks += chunks
        self._documents += documents
        elapsed = max(time.perf_counter() - self._phase_started, 1e-6)
        self._progress.update(
            self._task,
            advance=steps,
            chunks=self._chunks,
            docs=self._documents,
            rate=f"{self._chunks / elapsed:.1f}" if self._chunks else "-",
        )
