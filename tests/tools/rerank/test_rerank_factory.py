"""get_reranker: which provider "auto" picks from keys and paths, and the explicit choices."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.settings import load_settings
from tests.fakes.cohere_server import FAKE_COHERE_KEY, fake_cohere_server
from tools.knowledge_base.records import Hit
from tools.rerank.cohere import CohereReranker
from tools.rerank.factory import choose_reranker_provider, get_reranker
from tools.rerank.noop import NoopReranker


def make_hits(*scores: float) -> list[Hit]:
    return [Hit(chunk_id=f"c{i}", doc_id=f"d{i}", text=f"passage {i}", score=s) for i, s in enumerate(scores)]


def test_auto_without_key_or_path_is_the_offline_default(ragpilot_home):
    assert choose_reranker_provider(load_settings()) == "offline"


def test_auto_with_a_cohere_key_is_cohere_even_when_a_cross_encoder_is_set(
    ragpilot_home, monkeypatch, tmp_path
):
    monkeypatch.setenv("COHERE_API_KEY", FAKE_COHERE_KEY)
    settings = load_settings(rerank={"cross_encoder_path": str(tmp_path)})

    assert choose_reranker_provider(settings) == "cohere"
    assert isinstance(get_reranker(settings), CohereReranker)


def test_auto_with_only_a_cross_encoder_path_is_the_cross_encoder(ragpilot_home, tmp_path):
    settings = load_settings(rerank={"cross_encoder_path": str(tmp_path)})
    assert choose_reranker_provider(settings) == "cross_encoder"


@pytest.mark.parametrize("provider", ["offline", "none", "cohere", "cross_encoder"])
def test_an_explicit_provider_wins_over_auto_detection(ragpilot_home, monkeypatch, provider):
    monkeypatch.setenv("COHERE_API_KEY", FAKE_COHERE_KEY)
    assert choose_reranker_provider(load_settings(rerank={"provider": provider})) == provider


def test_none_keeps_the_fusion_order_and_cuts_to_top_n(ragpilot_home):
    hits = make_hits(0.5, 0.9, 0.1)

    reranked = get_reranker(load_settings(rerank={"provider": "none", "threshold": 0.99})).rerank(
        "q", hits, 2
    )

    assert isinstance(get_reranker(load_settings(rerank={"provider": "none"})), NoopReranker)
    assert [h.chunk_id for h in reranked] == ["c0", "c1"]
    assert [(h.score, h.rerank_score) for h in reranked] == [(0.5, 0.5), (0.9, 0.9)]


def test_explicit_cohere_without_a_key_is_a_config_error(ragpilot_home):
    with pytest.raises(ConfigError, match="rerank.provider is 'cohere' but COHERE_API_KEY is not set"):
        get_reranker(load_settings(rerank={"provider": "cohere"}))


def test_explicit_cross_encoder_without_a_path_is_a_config_error(ragpilot_home):
    with pytest.raises(ConfigError, match=r"rerank\.cross_encoder_path is not set"):
        get_reranker(load_settings(rerank={"provider": "cross_encoder"}))


def test_auto_builds_the_offline_reranker_blended_with_the_fused_order(ragpilot_home):
    from tools.rerank.fusion_blend import FusionBlendReranker
    from tools.rerank.offline import OfflineReranker

    reranker = get_reranker(load_settings())
    assert isinstance(reranker, FusionBlendReranker) and isinstance(reranker.inner, OfflineReranker)
    assert reranker.fusion_weight == 0.5
    assert isinstance(get_reranker(load_settings(rerank={"fusion_weight": 0})), OfflineReranker)


def test_a_cohere_reranker_configured_from_the_environment_reaches_its_base_url(ragpilot_home, monkeypatch):
    with fake_cohere_server() as server:
        monkeypatch.setenv("COHERE_API_KEY", FAKE_COHERE_KEY)
        monkeypatch.setenv("CO_API_URL", server.base_url)
        hits = [
            Hit(chunk_id="a", doc_id="a", text="bread and butter", score=0.9),
            Hit(chunk_id="b", doc_id="b", text="rank fusion of lists", score=0.1),
        ]

        reranked = get_reranker(load_settings()).rerank("rank fusion", hits, top_n=2)

        assert [h.chunk_id for h in reranked] == ["b", "a"]
        assert len(server.requests) == 1
