"""get_web_search: Tavily when a key is set, otherwise a search that reports itself unavailable."""

from __future__ import annotations

import pytest

from core.errors import ProviderUnavailable
from core.settings import load_settings
from tests.fakes.tavily_server import FAKE_TAVILY_KEY, fake_tavily_server
from tools.web_search.factory import get_web_search
from tools.web_search.tavily import TavilyWebSearch


def test_without_a_key_web_search_is_unavailable_and_says_why(ragpilot_home):
    search = get_web_search(load_settings())

    assert search.available is False
    with pytest.raises(ProviderUnavailable) as caught:
        search.search("anything", max_results=3)
    assert caught.value.provider == "web search"
    assert caught.value.reason == "TAVILY_API_KEY is not set"


@pytest.mark.parametrize("provider", ["auto", "tavily"])
def test_a_key_from_the_environment_selects_tavily(ragpilot_home, monkeypatch, provider):
    monkeypatch.setenv("TAVILY_API_KEY", FAKE_TAVILY_KEY)

    search = get_web_search(load_settings(web={"provider": provider}))

    assert isinstance(search, TavilyWebSearch)
    assert search.available is True


def test_provider_none_turns_web_search_off_even_with_a_key(ragpilot_home, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", FAKE_TAVILY_KEY)

    search = get_web_search(load_settings(web={"provider": "none"}))

    assert search.available is False
    with pytest.raises(ProviderUnavailable, match="web.provider = 'none'"):
        search.search("anything", max_results=3)


def test_the_factory_built_search_reaches_the_configured_base_url(ragpilot_home, monkeypatch):
    with fake_tavily_server() as server:
        monkeypatch.setenv("TAVILY_API_KEY", FAKE_TAVILY_KEY)
        monkeypatch.setenv("TAVILY_BASE_URL", server.base_url)

        hits = get_web_search(load_settings()).search("rerank model relevance", max_results=2)

        assert [h.url for h in hits] == ["https://docs.cohere.com/docs/rerank"]
        assert len(server.requests) == 1
