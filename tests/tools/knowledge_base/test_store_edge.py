"""Behaviour specific to the embedded store (one process per index, persistence, index metadata) and the
store factory (embedded by default, a server by URL)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from core.errors import ConfigError, ProviderUnavailable
from core.settings import load_settings
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.knowledge_base.records import Chunk
from tools.knowledge_base.sparse import FOLDING_ENCODER, UNFOLDED_ENCODER, SparseEncoder
from tools.knowledge_base.store.edge import EdgeStore, IndexLocked
from tools.knowledge_base.store.factory import open_store
from tools.knowledge_base.store.server import ServerStore

REPO = Path(__file__).resolve().parents[3]
ENCODER = SparseEncoder()


def write_one(store: EdgeStore, doc_id: str = "doc") -> None:
    chunks = [
        Chunk(chunk_id=f"{doc_id}#0", doc_id=doc_id, source="/s", title="t", text="persisted text"),
        Chunk(
            chunk_id=f"{doc_id}#s", doc_id=doc_id, source="/s", title="t", text="sum",
            kind="summary", searchable=False, content_hash="h",
        ),
    ]  # fmt: skip
    version = uuid.uuid4().hex
    store.upsert(
        chunks, np.eye(2, 4, dtype=np.float32), [ENCODER.encode_document(c.text) for c in chunks], version
    )
    store.commit_document(doc_id, version)


def test_the_index_persists_across_reopening(tmp_path):
    store = EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name)
    store.ensure_collection(4, "tiny")
    write_one(store)
    store.close()
    reopened = EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name)
    try:
        reopened.ensure_collection(4, "tiny")
        assert reopened.count() == 2
        assert reopened.documents()["doc"].content_hash == "h"
    finally:
        reopened.close()


def test_the_index_records_which_models_built_it(tmp_path):
    store = EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name)
    store.ensure_collection(4, "tiny")
    store.close()
    identity = json.loads((tmp_path / "index" / "index.json").read_text())
    assert (
        identity["embedder"] == "tiny" and identity["dim"] == 4 and identity["sparse_encoder"] == ENCODER.name
    )
    other_encoder = EdgeStore(tmp_path / "index", sparse_encoder="another-bm25")
    try:
        with pytest.raises(ConfigError, match="another-bm25"):
            other_encoder.ensure_collection(4, "tiny")
    finally:
        other_encoder.close()


def test_a_second_open_in_the_same_process_is_refused_until_the_first_closes(tmp_path):
    first = EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name)
    with pytest.raises(IndexLocked, match=str(tmp_path / "index")):
        EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name)
    first.close()
    EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name).close()


def test_another_process_holding_the_index_gets_a_clear_error_naming_its_pid(tmp_path):
    holder_code = (
        "import sys; from pathlib import Path; from tools.knowledge_base.store.edge import EdgeStore\n"
        "s = EdgeStore(Path(sys.argv[1]), sparse_encoder='x'); print('ready', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", holder_code, str(tmp_path / "index")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(ProviderUnavailable, match=f"pid {holder.pid}"):
            EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name)
    finally:
        holder.kill()
        holder.wait(timeout=30)
    # The lock dies with its process: no stale lock file blocks the next opener.
    EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name).close()


def test_reads_of_an_index_without_a_collection_are_empty(tmp_path):
    store = EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name)
    try:
        assert store.count() == 0 and store.documents() == {} and store.fetch(["x"]) == []
        assert store.purge_uncommitted() == 0 and store.delete_document("x") == 0
    finally:
        store.close()


def test_open_store_is_embedded_by_default_under_the_index_dir(tmp_path):
    settings = load_settings(home=tmp_path / "home")
    store = open_store(settings)
    try:
        assert isinstance(store, EdgeStore)
        assert store.index_dir == settings.index_dir
    finally:
        store.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_open_store_with_an_unreachable_server_names_qdrant_url(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}"
    settings = load_settings(home=tmp_path / "home", qdrant={"url": url, "timeout_s": 2})
    with pytest.raises(ProviderUnavailable, match=f"QDRANT_URL={url}"):
        open_store(settings)


def test_server_store_in_local_mode_persists_under_a_path(tmp_path):
    store = ServerStore.local(str(tmp_path / "qdrant"), "kb", sparse_encoder=ENCODER.name)
    store.ensure_collection(4, "tiny")
    write_one(store)  # type: ignore[arg-type]
    store.close()
    reopened = ServerStore.local(str(tmp_path / "qdrant"), "kb", sparse_encoder=ENCODER.name)
    try:
        with pytest.raises(ConfigError, match="another collection name"):
            reopened.ensure_collection(8, "bigger")
        assert reopened.count() == 2
    finally:
        reopened.close()


def test_knowledge_base_refuses_an_index_of_another_embedder_and_releases_it(tmp_path):
    settings = load_settings(home=tmp_path / "home")
    other = EdgeStore(settings.index_dir, sparse_encoder=ENCODER.name)
    other.ensure_collection(4, "some-4-dim-model")
    other.close()
    with pytest.raises(ConfigError, match="some-4-dim-model"):
        KnowledgeBase.open(settings)
    EdgeStore(settings.index_dir, sparse_encoder=ENCODER.name).close()  # the failed open left no lock


def test_an_index_built_before_folding_keeps_its_tokenizer_and_a_new_one_folds(tmp_path):
    old = load_settings(home=tmp_path / "old", search={"fold_chinese_script": False})
    with KnowledgeBase.open(old) as kb:
        assert kb.sparse.name == UNFOLDED_ENCODER
    # the upgrade: folding on by default, the old index opens with the encoder it was built with
    with KnowledgeBase.open(load_settings(home=tmp_path / "old")) as kb:
        assert kb.sparse.name == UNFOLDED_ENCODER
        assert json.loads((kb.settings.index_dir / "index.json").read_text())["sparse_encoder"] == UNFOLDED_ENCODER
    with KnowledgeBase.open(load_settings(home=tmp_path / "new")) as kb:
        assert kb.sparse.name == FOLDING_ENCODER


def test_knowledge_base_bundles_store_embedder_sparse_encoder_and_cache(tmp_path):
    settings = load_settings(home=tmp_path / "home")
    with KnowledgeBase.open(settings) as kb:
        assert isinstance(kb.store, EdgeStore)
        assert kb.embed_cache.model_name == kb.embedder.name
        assert (settings.home / "embeddings.sqlite").exists()
        assert kb.sparse.encode_query("cells").indices
    with pytest.raises(IndexLocked):
        held = KnowledgeBase.open(settings)
        try:
            EdgeStore(settings.index_dir, sparse_encoder=ENCODER.name)
        finally:
            held.close()
