"""The trained local router: its shipped weights load, clear questions route correctly, bad assets fail clearly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.errors import ConfigError, ModelAssetError
from core.settings import load_settings
from graphs.rag.classifier.factory import get_classifier
from graphs.rag.classifier.llm import LLMComplexityClassifier
from graphs.rag.classifier.local import (
    FEATURE_NAMES,
    ROUTER_MODEL_PATH,
    FeatureComplexityClassifier,
    load_router_weights,
    surface_features,
)
from tests.graphs.helpers import ScriptedChatModel
from tools.providers.embedder_base import Embedder
from tools.providers.embedder_factory import get_local_e5_embedder


@pytest.fixture(scope="module")
def router() -> FeatureComplexityClassifier:
    return FeatureComplexityClassifier(embedder=get_local_e5_embedder(load_settings()))


def test_shipped_weights_load_and_match_the_features():
    weights = load_router_weights()
    assert weights.labels == ["direct", "single", "iterative"]
    assert tuple(weights.feature_names) == FEATURE_NAMES
    assert weights.auto_choice in ("local", "llm")
    assert weights.measured["test"]["n"] > 100  # trained and measured, not hand-set


# None of these questions is in the training mixture (bench/train_router.py).
@pytest.mark.parametrize(
    ("question", "route"),
    [
        ("Hello, good morning!", "direct"),
        ("谢谢，再见！", "direct"),
        ("What is 48 divided by 6?", "direct"),
        ("25乘以4等于多少？", "direct"),
        ("In what year did the Normans first arrive in England?", "single"),
        ("What type of engine did the first locomotive use?", "single"),
        ("该游戏在中国大陆由哪家公司运营？", "single"),
        ("Which magazine was started first, Arthur's Magazine or First for Women?", "iterative"),
        ("What nationality was the director of the film that won the 1998 Palme d'Or?", "iterative"),
        ("莫言和余华谁更早出生？", "iterative"),
    ],
)
def test_clear_questions_take_their_route(router: FeatureComplexityClassifier, question: str, route: str):
    decision = router.classify(question)
    assert decision.route == route, decision.reason
    assert 0.0 <= decision.confidence <= 1.0


def test_a_question_naming_the_users_documents_is_never_direct(router: FeatureComplexityClassifier):
    decision = router.classify("Hi! What does our handbook say about leave?")
    assert decision.route != "direct"


def test_probabilities_sum_to_one(router: FeatureComplexityClassifier):
    probs = router.probabilities("Who wrote the Analects?")
    assert set(probs) == {"direct", "single", "iterative"}
    assert sum(probs.values()) == pytest.approx(1.0)


def test_the_reason_names_the_cues_that_fired(router: FeatureComplexityClassifier):
    decision = router.classify("Were Scott Derrickson and Ed Wood of the same nationality?")
    assert decision.reason.startswith(f"{decision.route}:")
    assert "question embedding" in decision.reason or router.weights.embedding_dim == 0


def test_an_empty_question_falls_back_to_one_retrieval(router: FeatureComplexityClassifier):
    decision = router.classify("   ")
    assert decision.route == "single" and decision.confidence == 0.0


def test_surface_features_are_one_value_per_named_feature():
    values = surface_features("Which is older, A or B?")
    assert values.shape == (len(FEATURE_NAMES),)
    assert values[FEATURE_NAMES.index("comparison between options")] == 1.0


def test_corrupt_weights_raise_model_asset_error_naming_the_file(tmp_path: Path):
    bad = tmp_path / "router.json"
    weights = json.loads(ROUTER_MODEL_PATH.read_text())
    weights["coef"] = weights["coef"][:2]
    bad.write_text(json.dumps(weights))
    with pytest.raises(ModelAssetError, match=str(bad)):
        load_router_weights(bad)
    with pytest.raises(ModelAssetError, match="cannot be read"):
        load_router_weights(tmp_path / "missing.json")


class _OtherEmbedder(Embedder):
    """Another embedding model's interface (never asked to embed: the name check comes first)."""

    name = "some-other-model"
    dim = 384

    def embed_passages(self, texts):  # pragma: no cover - not reached
        raise AssertionError

    def embed_query(self, text):  # pragma: no cover - not reached
        raise AssertionError

    def count_tokens(self, text):  # pragma: no cover - not reached
        raise AssertionError


def test_an_embedder_other_than_the_trained_one_is_refused():
    classifier = FeatureComplexityClassifier(embedder=_OtherEmbedder())
    assert classifier.uses_embedding  # the shipped router (bench/train_router.py) reads the e5 embedding
    with pytest.raises(ConfigError, match="trained with"):
        classifier.classify("Who wrote Hamlet?")


def test_factory_auto_uses_the_measured_choice_and_llm_loads_the_model_only_when_chosen(tmp_path: Path):
    loaded: list[str] = []

    def llm() -> ScriptedChatModel:
        loaded.append("llm")
        return ScriptedChatModel()

    auto = get_classifier(load_settings(home=tmp_path), llm)
    expected = (
        FeatureComplexityClassifier
        if load_router_weights().auto_choice == "local"
        else LLMComplexityClassifier
    )
    assert isinstance(auto, expected)
    assert loaded == ([] if expected is FeatureComplexityClassifier else ["llm"])
    assert isinstance(
        get_classifier(load_settings(home=tmp_path, graph={"router": "llm"}), llm), LLMComplexityClassifier
    )
    assert isinstance(
        get_classifier(load_settings(home=tmp_path, graph={"router": "local"}), llm),
        FeatureComplexityClassifier,
    )


def test_inputs_include_the_embedding_when_the_weights_use_it(router: FeatureComplexityClassifier):
    row = router.inputs("Who wrote Hamlet?")
    assert row.shape == (len(FEATURE_NAMES) + router.weights.embedding_dim,)
    assert np.isfinite(row).all()
