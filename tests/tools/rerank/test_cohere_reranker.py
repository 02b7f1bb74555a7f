"""CohereReranker over real HTTP against a fake Cohere service on 127.0.0.1."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import ConfigError, ProviderUnavailable
from core.settings import Settings, load_settings
from tests.fakes.cohere_server import FAKE_COHERE_KEY, RERANK_PATH, fake_cohere_server, word_overlap_score
from tests.fakes.http_server import FakeHTTPServer, FakeResponse
from tools.knowledge_base.records import Hit
from tools.rerank.cohere import CohereReranker, approx_token_count, passage_budget

QUERY = "how does reciprocal rank fusion combine dense and sparse results"


@pytest.fixture
def cohere_server() -> Iterator[FakeHTTPServer]:
    with fake_cohere_server() as server:
        yield server


def make_settings(base_url: str, ragpilot_home: Path, **rerank: Any) -> Settings:
    rerank_settings = {"timeout_s": 2.0, "max_retries": 2, "max_retry_wait_s": 0.05, **rerank}
    return load_settings(cohere_api_key=FAKE_COHERE_KEY, cohere_base_url=base_url, rerank=rerank_settings)


def cohere_reranker(settings: Settings) -> CohereReranker:
    """The reranker built from its own settings section and key, as its factory builds it."""
    return CohereReranker(settings.rerank, api_key=settings.cohere_api_key, base_url=settings.cohere_base_url)


def make_hits(*texts: str) -> list[Hit]:
    return [
        Hit(chunk_id=f"doc{i}:0", doc_id=f"doc{i}", text=text, score=1.0 / (60 + i))
        for i, text in enumerate(texts)
    ]


PASSAGES = (
    "Sourdough bread is baked at high heat.",
    "Reciprocal rank fusion adds 1 / (k + rank) over the dense and sparse result lists.",
    "Dense retrieval embeds the query; sparse retrieval matches its terms.",
    "Fusion of results.",
)


def test_hits_come_back_in_the_services_order_with_its_scores(cohere_server, ragpilot_home):
    reranker = cohere_reranker(make_settings(cohere_server.base_url, ragpilot_home))
    hits = make_hits(*PASSAGES)

    reranked = reranker.rerank(QUERY, hits, top_n=4)

    expected = sorted(((h, word_overlap_score(QUERY, h.text)) for h in hits), key=lambda p: -p[1])
    assert [h.chunk_id for h in reranked] == [h.chunk_id for h, _ in expected]
    assert [h.rerank_score for h in reranked] == pytest.approx([s for _, s in expected])
    assert all(h.score == h.rerank_score for h in reranked)
    sent = cohere_server.requests_to("POST", RERANK_PATH)[0].json()
    assert sent["model"] == "rerank-v3.5"
    assert sent["documents"] == list(PASSAGES)


def test_reply_indices_map_back_to_the_hits_they_name(cohere_server, ragpilot_home):
    reply = {
        "results": [
            {"index": 2, "relevance_score": 0.91},
            {"index": 0, "relevance_score": 0.42},
            {"index": 1, "relevance_score": 0.05},
        ]
    }
    cohere_server.enqueue("POST", RERANK_PATH, FakeResponse(json_body=reply))
    hits = make_hits("a", "b", "c")

    reranked = cohere_reranker(make_settings(cohere_server.base_url, ragpilot_home)).rerank(
        "q", hits, top_n=3
    )

    assert [(h.text, h.rerank_score) for h in reranked] == [("c", 0.91), ("a", 0.42), ("b", 0.05)]


def test_top_n_cuts_and_threshold_drops_low_scores(cohere_server, ragpilot_home):
    hits = make_hits(*PASSAGES)
    settings = make_settings(cohere_server.base_url, ragpilot_home, threshold=0.2)

    reranked = cohere_reranker(settings).rerank(QUERY, hits, top_n=2)

    assert len(reranked) == 2
    assert all(h.rerank_score is not None and h.rerank_score >= 0.2 for h in reranked)
    everything = cohere_reranker(settings).rerank(QUERY, hits, top_n=10)
    assert "Sourdough bread is baked at high heat." not in [h.text for h in everything]  # scores 0


def test_no_hits_means_no_request(cohere_server, ragpilot_home):
    assert (
        cohere_reranker(make_settings(cohere_server.base_url, ragpilot_home)).rerank(QUERY, [], top_n=5) == []
    )
    assert cohere_server.requests == []


def test_query_is_sent_whole_while_long_passages_are_cut_to_the_budget(cohere_server, ragpilot_home):
    long_query = " ".join(f"term{i}" for i in range(120))
    long_passage = " ".join(f"word{i}" for i in range(3000))
    long_chinese = "检索增强生成把检索到的段落交给模型。" * 200
    settings = make_settings(cohere_server.base_url, ragpilot_home, max_tokens=512)
    hits = make_hits(long_passage, "short passage", long_chinese)

    cohere_reranker(settings).rerank(long_query, hits, top_n=3)

    sent = cohere_server.requests_to("POST", RERANK_PATH)[0].json()
    budget = passage_budget(long_query, 512)
    assert sent["query"] == long_query
    assert sent["max_tokens_per_doc"] == budget
    cut_english, short, cut_chinese = sent["documents"]
    assert short == "short passage"
    for cut, full in ((cut_english, long_passage), (cut_chinese, long_chinese)):
        assert full.startswith(cut) and len(cut) < len(full)
        assert budget - 10 <= approx_token_count(cut) <= budget
    assert approx_token_count(long_query) + budget <= 512


def test_429_is_retried_and_retry_after_is_honoured(cohere_server, ragpilot_home):
    cohere_server.enqueue("POST", RERANK_PATH, FakeResponse(status=429, headers={"Retry-After": "1"}))
    settings = make_settings(cohere_server.base_url, ragpilot_home, max_retry_wait_s=5.0)

    started = time.monotonic()
    reranked = cohere_reranker(settings).rerank(QUERY, make_hits(*PASSAGES), top_n=2)
    elapsed = time.monotonic() - started

    assert len(reranked) == 2
    assert len(cohere_server.requests_to("POST", RERANK_PATH)) == 2
    assert 1.0 <= elapsed < 4.0


def test_a_long_retry_after_is_capped_by_max_retry_wait(cohere_server, ragpilot_home):
    cohere_server.enqueue("POST", RERANK_PATH, FakeResponse(status=429, headers={"Retry-After": "120"}))
    settings = make_settings(cohere_server.base_url, ragpilot_home, max_retry_wait_s=0.2)

    started = time.monotonic()
    cohere_reranker(settings).rerank(QUERY, make_hits(*PASSAGES), top_n=2)

    assert 0.2 <= time.monotonic() - started < 3.0


def test_500_until_the_retry_bound_raises_provider_unavailable(cohere_server, ragpilot_home):
    failure = FakeResponse(status=500, json_body={"message": "internal error"})
    cohere_server.enqueue("POST", RERANK_PATH, failure, failure, failure, failure)
    settings = make_settings(cohere_server.base_url, ragpilot_home, max_retries=2)

    with pytest.raises(ProviderUnavailable) as caught:
        cohere_reranker(settings).rerank(QUERY, make_hits(*PASSAGES), top_n=2)

    assert caught.value.provider == "cohere rerank"
    assert "HTTP 500" in caught.value.reason and "3 attempts" in caught.value.reason
    assert len(cohere_server.requests_to("POST", RERANK_PATH)) == 3


def test_500_then_success_recovers(cohere_server, ragpilot_home):
    cohere_server.enqueue("POST", RERANK_PATH, FakeResponse(status=503, raw_body=b"<html>busy</html>"))
    reranked = cohere_reranker(make_settings(cohere_server.base_url, ragpilot_home)).rerank(
        QUERY, make_hits(*PASSAGES), top_n=1
    )
    assert len(reranked) == 1
    assert len(cohere_server.requests_to("POST", RERANK_PATH)) == 2


def test_a_server_slower_than_the_timeout_raises_provider_unavailable(cohere_server, ragpilot_home):
    slow = FakeResponse(json_body={"results": []}, delay_s=1.5)
    cohere_server.enqueue("POST", RERANK_PATH, slow, slow)
    settings = make_settings(cohere_server.base_url, ragpilot_home, timeout_s=0.3, max_retries=1)

    started = time.monotonic()
    with pytest.raises(ProviderUnavailable, match="no reply within 0.3s"):
        cohere_reranker(settings).rerank(QUERY, make_hits(*PASSAGES), top_n=2)

    assert time.monotonic() - started < 1.5  # gave up on the client side, did not wait for the server
    assert len(cohere_server.requests_to("POST", RERANK_PATH)) == 2


def test_malformed_json_raises_provider_unavailable_without_retrying(cohere_server, ragpilot_home):
    cohere_server.enqueue("POST", RERANK_PATH, FakeResponse(raw_body=b'{"results": [{"index": 0,'))

    with pytest.raises(ProviderUnavailable, match="malformed JSON"):
        cohere_reranker(make_settings(cohere_server.base_url, ragpilot_home)).rerank(
            QUERY, make_hits(*PASSAGES), top_n=2
        )
    assert len(cohere_server.requests_to("POST", RERANK_PATH)) == 1


@pytest.mark.parametrize(
    "reply",
    [
        {"results": [{"index": 7, "relevance_score": 0.5}]},
        {"results": [{"index": 0, "relevance_score": "high"}]},
        {"results": [{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.4}]},
        {"results": [{"index": 0, "relevance_score": 0.5}]},  # the other documents got no score
        {"no_results": True},
    ],
)
def test_a_reply_of_the_wrong_shape_raises_provider_unavailable(cohere_server, ragpilot_home, reply):
    cohere_server.enqueue("POST", RERANK_PATH, FakeResponse(json_body=reply))

    with pytest.raises(ProviderUnavailable, match="malformed"):
        cohere_reranker(make_settings(cohere_server.base_url, ragpilot_home)).rerank(
            QUERY, make_hits("a", "b"), top_n=2
        )


def test_a_rejected_key_is_not_retried(cohere_server, ragpilot_home):
    settings = make_settings(cohere_server.base_url, ragpilot_home).model_copy(
        update={"cohere_api_key": "wrong-key"}
    )

    with pytest.raises(ProviderUnavailable, match="HTTP 401"):
        cohere_reranker(settings).rerank(QUERY, make_hits(*PASSAGES), top_n=2)
    assert len(cohere_server.requests_to("POST", RERANK_PATH)) == 1


def test_a_refused_connection_raises_provider_unavailable(ragpilot_home):
    with socket.socket() as probe:  # a port nobody listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = make_settings(f"http://127.0.0.1:{port}", ragpilot_home, max_retries=1)

    with pytest.raises(ProviderUnavailable, match="connection failed"):
        cohere_reranker(settings).rerank(QUERY, make_hits(*PASSAGES), top_n=2)


def test_missing_key_is_a_config_error(ragpilot_home):
    with pytest.raises(ConfigError, match="COHERE_API_KEY"):
        cohere_reranker(load_settings())
