"""CrossEncoderReranker: error paths always; real scoring with a tiny cross-encoder built on the spot.

No cross-encoder ships in a PyPI package, so the real tests build one locally: a randomly initialised
one-layer BERT with a one-label head and a WordPiece tokenizer from a small vocabulary, saved with
``save_pretrained``. Its scores mean nothing, but they are the model's scores: the tests check that
they are the ones the reranker orders by, and that every pair fits the model's window with the query
whole. They need the optional extra (``pip install 'ragpilot[cross-encoder]'``) and skip without it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.settings import load_settings
from tests.fakes.tiny_cross_encoder import WINDOW, build_tiny_cross_encoder
from tools.knowledge_base.records import Hit
from tools.rerank import cross_encoder
from tools.rerank.cross_encoder import CrossEncoderReranker


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"))


def make_hits(*texts: str) -> list[Hit]:
    return [Hit(chunk_id=f"d{i}:0", doc_id=f"d{i}", text=t, score=0.0) for i, t in enumerate(texts)]


def independent_scores(model_dir: Path, pairs: list[tuple[str, str]]) -> list[float]:
    """The model's sigmoid scores computed with transformers directly, not through the reranker."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, local_files_only=True).eval()
    batch = tokenizer([q for q, _ in pairs], [p for _, p in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        return torch.sigmoid(model(**batch).logits[:, 0]).tolist()


PASSAGES = (
    "bake the bread in the oven",
    "reciprocal rank fusion combine dense and sparse results",
    "the query and the passage",
    "relevance order of documents",
    "dense retrieval model",
)


def test_hits_are_ordered_by_the_models_own_scores(tiny_model_dir, ragpilot_home):
    settings = load_settings(rerank={"cross_encoder_path": str(tiny_model_dir)})
    query = "how does rank fusion combine results"
    hits = make_hits(*PASSAGES)

    reranked = CrossEncoderReranker(settings.rerank).rerank(query, hits, top_n=5)

    expected = independent_scores(tiny_model_dir, [(query, p) for p in PASSAGES])
    by_text = dict(zip(PASSAGES, expected, strict=True))
    assert [h.text for h in reranked] == sorted(PASSAGES, key=lambda p: -by_text[p])
    assert [h.rerank_score for h in reranked] == pytest.approx(sorted(expected, reverse=True), abs=1e-5)
    assert len(set(round(s, 4) for s in expected)) > 1, "a constant model would not test ordering"


def test_top_n_and_threshold_cut_the_list(tiny_model_dir, ragpilot_home):
    query = "dense retrieval"
    scores = independent_scores(tiny_model_dir, [(query, p) for p in PASSAGES])
    median = sorted(scores)[len(scores) // 2]
    settings = load_settings(rerank={"cross_encoder_path": str(tiny_model_dir), "threshold": median})

    reranked = CrossEncoderReranker(settings.rerank).rerank(query, make_hits(*PASSAGES), top_n=5)

    assert len(reranked) == sum(s >= median for s in scores)
    assert len(CrossEncoderReranker(settings.rerank).rerank(query, make_hits(*PASSAGES), top_n=1)) == 1


def test_long_passages_are_cut_to_the_window_and_the_query_is_kept_whole(tiny_model_dir, ragpilot_home):
    settings = load_settings(rerank={"cross_encoder_path": str(tiny_model_dir)})
    reranker = CrossEncoderReranker(settings.rerank)
    query = "how does reciprocal rank fusion combine dense and sparse results lists"
    long_english = " ".join(["the dense model retrieval passage score"] * 60)
    long_chinese = "检索增强生成" * 80

    pairs = reranker.pairs(query, make_hits(long_english, "short passage", long_chinese))

    assert [q for q, _ in pairs] == [query] * 3
    assert pairs[1][1] == "short passage"
    for (_, cut), full in zip((pairs[0], pairs[2]), (long_english, long_chinese), strict=True):
        assert full.startswith(cut) and len(cut) < len(full)
        pair_tokens = len(reranker.tokenizer(query, cut)["input_ids"])
        assert WINDOW - 2 <= pair_tokens <= WINDOW  # fills the window without spilling over


def test_rerank_max_tokens_narrows_the_window(tiny_model_dir, ragpilot_home):
    settings = load_settings(rerank={"cross_encoder_path": str(tiny_model_dir), "max_tokens": 32})
    reranker = CrossEncoderReranker(settings.rerank)
    query = "rank fusion"

    ((_, cut),) = reranker.pairs(query, make_hits(" ".join(["dense sparse results"] * 40)))

    assert reranker.window == 32
    assert len(reranker.tokenizer(query, cut)["input_ids"]) <= 32


def test_unset_path_is_a_config_error_naming_the_setting(ragpilot_home):
    with pytest.raises(ConfigError, match=r"rerank\.cross_encoder_path is not set"):
        CrossEncoderReranker(load_settings().rerank)


def test_a_path_that_is_not_a_directory_is_a_config_error(ragpilot_home, tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ConfigError, match=r"rerank\.cross_encoder_path: .*no-such-model is not a directory"):
        CrossEncoderReranker(load_settings(rerank={"cross_encoder_path": str(missing)}).rerank)


def test_a_directory_without_a_model_config_is_a_config_error(ragpilot_home, tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ConfigError, match=r"rerank\.cross_encoder_path: .* has no config\.json"):
        CrossEncoderReranker(load_settings(rerank={"cross_encoder_path": str(tmp_path)}).rerank)


def test_a_broken_model_directory_is_a_config_error(ragpilot_home, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "num_labels": 1}))
    with pytest.raises(ConfigError, match=r"rerank\.cross_encoder_path"):
        CrossEncoderReranker(load_settings(rerank={"cross_encoder_path": str(tmp_path)}).rerank)


def test_without_sentence_transformers_the_error_names_the_extra(ragpilot_home, tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if the extra were not installed
    cross_encoder._load_cross_encoder.cache_clear()

    with pytest.raises(
        ConfigError, match=r"sentence-transformers is not installed: pip install 'ragpilot\[cross-encoder\]'"
    ):
        CrossEncoderReranker(load_settings(rerank={"cross_encoder_path": str(tmp_path)}).rerank)
