"""The BM25 sparse encoder: tokenization (English and Chinese), stable term ids, the weights it writes,
and that the engine's IDF modifier turns them into exact BM25 scores."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from tools.knowledge_base.records import Chunk
from tools.knowledge_base.sparse import (
    DEFAULT_AVGDL,
    FOLDING_ENCODER,
    UNFOLDED_ENCODER,
    SparseEncoder,
    term_id,
    tokenize,
)
from tools.knowledge_base.store.edge import EdgeStore
from tools.knowledge_base.store.server import ServerStore

REPO = Path(__file__).resolve().parents[3]


def test_english_is_lowercased_stemmed_and_stripped_of_stop_words():
    assert tokenize("The Cells were Running studies of the mice") == ["cell", "run", "studi", "mice"]


def test_a_traditional_question_has_the_terms_of_its_simplified_document():
    # a railway timetable written in Simplified, asked about in Traditional (and the reverse)
    document = SparseEncoder().encode_document("高铁从台北到高雄的末班车几点发车")
    question = SparseEncoder().encode_query("高鐵末班車幾點發車？")
    assert set(question.indices) <= set(document.indices)
    assert tokenize("圖書館週末開放") == tokenize("图书馆周末开放")


def test_without_folding_the_scripts_share_few_terms():
    unfolded = SparseEncoder(fold_chinese_script=False)
    document = unfolded.encode_document("高铁从台北到高雄的末班车几点发车")
    question = unfolded.encode_query("高鐵末班車幾點發車？")
    assert not set(question.indices) <= set(document.indices)
    assert unfolded.name == UNFOLDED_ENCODER and SparseEncoder().name == FOLDING_ENCODER


def test_folding_leaves_simplified_and_english_terms_as_they_were():
    for text in ["这家面包店几点开门？", "The bakery opens at 7 on Sundays", "台北的小吃"]:
        assert tokenize(text) == tokenize(text, fold_chinese_script=False)


def test_an_index_keeps_the_encoder_it_was_built_with():
    assert SparseEncoder.for_index(UNFOLDED_ENCODER).name == UNFOLDED_ENCODER
    assert SparseEncoder.for_index(FOLDING_ENCODER, fold_chinese_script=False).name == FOLDING_ENCODER
    # a new index (or one of an encoder this version does not know: the identity check then refuses it)
    assert SparseEncoder.for_index(None).name == FOLDING_ENCODER
    assert SparseEncoder.for_index(None, fold_chinese_script=False).name == UNFOLDED_ENCODER
    assert SparseEncoder.for_index("another-bm25").name == FOLDING_ENCODER


def test_possessives_and_curly_apostrophes_reduce_to_the_word():
    assert tokenize("the cell's membrane and the cell’s wall") == ["cell", "membran", "cell", "wall"]


def test_chinese_is_segmented_by_jieba_in_search_mode_without_function_words():
    tokens = tokenize("北京大学的研究生命科学")
    assert "北京" in tokens and "北京大学" in tokens  # the word and its sub-words
    assert "生命" in tokens and "科学" in tokens
    assert "的" not in tokens


def test_mixed_script_text_is_tokenized_per_run_in_order():
    tokens = tokenize("COVID-19疫苗 trials在北京进行")
    assert tokens[:2] == ["covid", "19"]
    assert tokens.index("疫苗") < tokens.index("trial") < tokens.index("北京")


def test_punctuation_only_and_empty_text_have_no_tokens():
    assert tokenize("") == []
    assert tokenize(" ,.;!? — 。，") == []


def test_term_ids_are_31_bit_and_identical_across_processes():
    terms = ["cell", "北京", "covid"]
    here = [term_id(t) for t in terms]
    assert all(0 <= i < 2**31 for i in here)
    code = "import sys; from tools.knowledge_base.sparse import term_id; print([term_id(t) for t in sys.argv[1:]])"
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, *terms],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=REPO,
        )
        assert out.stdout.strip() == str(here)


def bm25_tf(tf: int, doc_len: int, k1: float = 1.2, b: float = 0.75, avgdl: float = DEFAULT_AVGDL) -> float:
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl))


def test_document_weights_are_bm25_term_frequency_saturation():
    vector = SparseEncoder().encode_document("cells cells cells mouse")  # tokens: cell cell cell mous
    weights = dict(zip(vector.indices, vector.values, strict=True))
    assert weights[term_id("cell")] == pytest.approx(bm25_tf(3, 4))
    assert weights[term_id("mous")] == pytest.approx(bm25_tf(1, 4))
    assert vector.indices == sorted(vector.indices)


def test_a_term_weighs_less_in_a_longer_document():
    encoder = SparseEncoder()
    short = encoder.encode_document("protein folding")
    long = encoder.encode_document("protein folding " + "filler words everywhere " * 200)
    pid = term_id("protein")
    weight = {i: v for i, v in zip(long.indices, long.values, strict=True)}[pid]
    assert weight < dict(zip(short.indices, short.values, strict=True))[pid]


def test_parameters_are_validated():
    with pytest.raises(ValueError, match="BM25"):
        SparseEncoder(b=1.5)
    with pytest.raises(ValueError, match="BM25"):
        SparseEncoder(avgdl=0)


def test_a_query_carries_one_per_unique_term():
    vector = SparseEncoder().encode_query("cell cells CELL membrane")
    assert sorted(vector.indices) == sorted({term_id("cell"), term_id("membran")})
    assert vector.values == [1.0, 1.0]


DOCS = [
    "Vitamin D deficiency is linked to bone fractures in older adults.",
    "Bone density improves with resistance training and vitamin intake.",
    "Statins lower cholesterol and reduce cardiovascular events.",
    "Fractures of the hip are common after falls.",
]


@pytest.mark.parametrize("backend", ["edge", "server-local"])
def test_the_engine_scores_are_exactly_bm25_with_qdrant_idf(tmp_path, backend):
    """IDF comes from the collection (Modifier.IDF): score = Σ idf(t) · w(t, d), idf = ln(1 + (N − n + ½)/(n + ½))."""
    encoder = SparseEncoder()
    if backend == "edge":
        store = EdgeStore(tmp_path / "index", sparse_encoder=encoder.name)
    else:
        store = ServerStore.local(":memory:", "bm25", sparse_encoder=encoder.name)
    try:
        store.ensure_collection(4, "tiny")
        chunks = [
            Chunk(chunk_id=f"d#{i}", doc_id="d", source="s", title="", text=t) for i, t in enumerate(DOCS)
        ]
        version = uuid.uuid4().hex
        store.upsert(chunks, np.eye(4, dtype=np.float32), [encoder.encode_document(t) for t in DOCS], version)
        store.commit_document("d", version)
        query = "bone fractures vitamin"
        hits = store.query(
            mode="sparse", dense=None, sparse=encoder.encode_query(query), filter=None,
            limit=10, leg_depth=10, rrf_k=60, weights=(1.0, 1.0),
        )  # fmt: skip
        doc_tokens = [tokenize(t) for t in DOCS]
        n_docs = len(DOCS)

        def expected(tokens: list[str]) -> float:
            total = 0.0
            for term in set(tokenize(query)):
                if term in tokens:
                    df = sum(term in d for d in doc_tokens)
                    idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
                    total += idf * bm25_tf(tokens.count(term), len(tokens))
            return total

        by_id = {h.chunk.chunk_id: h.score for h in hits}
        assert set(by_id) == {"d#0", "d#1", "d#3"}
        for i in (0, 1, 3):
            assert by_id[f"d#{i}"] == pytest.approx(expected(doc_tokens[i]), rel=1e-4)
        assert [h.chunk.chunk_id for h in hits][0] == "d#0"  # all three query terms
    finally:
        store.close()
