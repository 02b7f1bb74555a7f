"""TavilyWebSearch over real HTTP against a fake Tavily service on 127.0.0.1."""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import ConfigError, ProviderUnavailable
from core.settings import Settings, load_settings
from tests.fakes.http_server import FakeHTTPServer, FakeResponse
from tests.fakes.tavily_server import DEFAULT_PAGES, FAKE_TAVILY_KEY, SEARCH_PATH, fake_tavily_server
from tools.web_search.tavily import TavilyWebSearch

QUERY = "reciprocal rank fusion"


@pytest.fixture
def tavily_server() -> Iterator[FakeHTTPServer]:
    with fake_tavily_server() as server:
        yield server


def make_settings(base_url: str, ragpilot_home: Path, **web: Any) -> Settings:
    web_settings = {"timeout_s": 2.0, "max_retries": 2, "max_retry_wait_s": 0.05, **web}
    return load_settings(tavily_api_key=FAKE_TAVILY_KEY, tavily_base_url=base_url, web=web_settings)


def sent_requests(server: FakeHTTPServer) -> list[dict[str, Any]]:
    return [r.json() for r in server.requests_to("POST", SEARCH_PATH)]


def tavily_search(settings: Settings) -> TavilyWebSearch:
    """The client built from its own settings section and key, as its factory builds it."""
    return TavilyWebSearch(settings.web, api_key=settings.tavily_api_key, base_url=settings.tavily_base_url)


def test_results_become_web_hits_with_url_title_and_score(tavily_server, ragpilot_home):
    hits = tavily_search(make_settings(tavily_server.base_url, ragpilot_home)).search(QUERY, max_results=5)

    pages = {p.url: p for p in DEFAULT_PAGES}
    assert hits, "the fake web has pages about RRF"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for hit in hits:
        page = pages[hit.url]
        assert hit.origin == "web"
        assert (hit.doc_id, hit.source, hit.title, hit.text) == (page.url, page.url, page.title, page.content)
        assert hit.chunk_id == "web:" + hashlib.sha1(page.url.encode()).hexdigest()[:16]
    assert "https://example.org/cooking/bread" not in [h.url for h in hits]
    sent = sent_requests(tavily_server)[0]
    assert (sent["query"], sent["max_results"]) == (QUERY, 5)


def test_include_domains_reach_the_service_and_restrict_results(tavily_server, ragpilot_home):
    search = tavily_search(make_settings(tavily_server.base_url, ragpilot_home))

    hits = search.search(QUERY, max_results=5, include_domains=["wikipedia.org"])

    assert [h.url for h in hits] == ["https://en.wikipedia.org/wiki/Reciprocal_rank_fusion"]
    assert sent_requests(tavily_server)[0]["include_domains"] == ["wikipedia.org"]


def test_settings_domains_apply_when_the_call_names_none(tavily_server, ragpilot_home):
    settings = make_settings(tavily_server.base_url, ragpilot_home, include_domains=["qdrant.tech"])

    hits = tavily_search(settings).search(QUERY, max_results=5)

    assert {h.url for h in hits} == {"https://qdrant.tech/documentation/concepts/hybrid-queries/"}


def test_max_results_is_clamped_and_duplicate_urls_are_dropped(tavily_server, ragpilot_home):
    duplicate = {"url": "https://a.example/x", "title": "A", "content": "first", "score": 0.9}
    reply = {
        "results": [duplicate, {**duplicate, "content": "again"}, {"url": "https://b.example/", "score": 0.1}]
    }
    tavily_server.enqueue("POST", SEARCH_PATH, FakeResponse(json_body=reply))

    hits = tavily_search(make_settings(tavily_server.base_url, ragpilot_home)).search(QUERY, max_results=50)

    assert [(h.url, h.text) for h in hits] == [("https://a.example/x", "first"), ("https://b.example/", "")]
    assert sent_requests(tavily_server)[0]["max_results"] == 20


def test_429_is_retried_and_retry_after_is_honoured(tavily_server, ragpilot_home):
    rate_limited = FakeResponse(
        status=429, json_body={"detail": {"error": "slow down"}}, headers={"Retry-After": "1"}
    )
    tavily_server.enqueue("POST", SEARCH_PATH, rate_limited)
    settings = make_settings(tavily_server.base_url, ragpilot_home, max_retry_wait_s=5.0)

    started = time.monotonic()
    hits = tavily_search(settings).search(QUERY, max_results=3)

    assert hits
    assert len(sent_requests(tavily_server)) == 2
    assert 1.0 <= time.monotonic() - started < 4.0


def test_429_until_the_bound_raises_provider_unavailable(tavily_server, ragpilot_home):
    rate_limited = FakeResponse(
        status=429, json_body={"detail": {"error": "slow down"}}, headers={"Retry-After": "60"}
    )
    tavily_server.enqueue("POST", SEARCH_PATH, *[rate_limited] * 4)
    settings = make_settings(tavily_server.base_url, ragpilot_home, max_retries=1, max_retry_wait_s=0.1)

    started = time.monotonic()
    with pytest.raises(ProviderUnavailable, match="429"):
        tavily_search(settings).search(QUERY, max_results=3)
    assert time.monotonic() - started < 3.0  # Retry-After: 60 capped by web.max_retry_wait_s
    assert len(sent_requests(tavily_server)) == 2


def test_500_until_the_retry_bound_raises_provider_unavailable(tavily_server, ragpilot_home):
    failure = FakeResponse(status=500, json_body={"detail": {"error": "boom"}})
    tavily_server.enqueue("POST", SEARCH_PATH, *[failure] * 4)

    with pytest.raises(ProviderUnavailable) as caught:
        tavily_search(make_settings(tavily_server.base_url, ragpilot_home, max_retries=2)).search(QUERY, 3)

    assert caught.value.provider == "tavily web search"
    assert "HTTP 500" in caught.value.reason and "3 attempts" in caught.value.reason
    assert len(sent_requests(tavily_server)) == 3


def test_502_then_success_recovers(tavily_server, ragpilot_home):
    tavily_server.enqueue("POST", SEARCH_PATH, FakeResponse(status=502, raw_body=b"bad gateway"))

    hits = tavily_search(make_settings(tavily_server.base_url, ragpilot_home)).search(QUERY, 3)

    assert hits and len(sent_requests(tavily_server)) == 2


def test_a_server_slower_than_the_timeout_raises_provider_unavailable(tavily_server, ragpilot_home):
    slow = FakeResponse(json_body={"results": []}, delay_s=1.5)
    tavily_server.enqueue("POST", SEARCH_PATH, slow, slow)
    settings = make_settings(tavily_server.base_url, ragpilot_home, timeout_s=0.3, max_retries=1)

    started = time.monotonic()
    with pytest.raises(ProviderUnavailable, match=r"no reply within 0.3s \(web.timeout_s\)"):
        tavily_search(settings).search(QUERY, 3)
    assert time.monotonic() - started < 1.5
    assert len(sent_requests(tavily_server)) == 2


def test_malformed_json_raises_provider_unavailable_without_retrying(tavily_server, ragpilot_home):
    tavily_server.enqueue("POST", SEARCH_PATH, FakeResponse(raw_body=b'{"results": [{"url": '))

    with pytest.raises(ProviderUnavailable, match="malformed JSON"):
        tavily_search(make_settings(tavily_server.base_url, ragpilot_home)).search(QUERY, 3)
    assert len(sent_requests(tavily_server)) == 1


@pytest.mark.parametrize(
    "reply",
    [
        {"results": [{"title": "no url"}]},
        {"results": "none"},
        {"results": [{"url": "https://x.example", "score": "hi"}]},
    ],
)
def test_a_reply_of_the_wrong_shape_raises_provider_unavailable(tavily_server, ragpilot_home, reply):
    tavily_server.enqueue("POST", SEARCH_PATH, FakeResponse(json_body=reply))

    with pytest.raises(ProviderUnavailable, match="malformed reply"):
        tavily_search(make_settings(tavily_server.base_url, ragpilot_home)).search(QUERY, 3)


def test_a_rejected_key_is_not_retried(tavily_server, ragpilot_home):
    settings = make_settings(tavily_server.base_url, ragpilot_home).model_copy(
        update={"tavily_api_key": "tvly-bad"}
    )

    with pytest.raises(ProviderUnavailable, match="rejected TAVILY_API_KEY"):
        tavily_search(settings).search(QUERY, 3)
    assert len(sent_requests(tavily_server)) == 1


def test_a_refused_connection_raises_provider_unavailable(ragpilot_home):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(ProviderUnavailable, match="connection failed"):
        tavily_search(make_settings(f"http://127.0.0.1:{port}", ragpilot_home, max_retries=1)).search(
            QUERY, 3
        )


def test_blank_query_is_rejected_before_any_request(tavily_server, ragpilot_home):
    with pytest.raises(ValueError, match="query is empty"):
        tavily_search(make_settings(tavily_server.base_url, ragpilot_home)).search("   ", 3)
    assert tavily_server.requests == []


def test_missing_key_is_a_config_error(ragpilot_home):
    with pytest.raises(ConfigError, match="TAVILY_API_KEY"):
        tavily_search(load_settings())
