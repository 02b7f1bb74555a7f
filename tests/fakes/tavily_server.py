"""A fake Tavily search API (``POST /search``) on 127.0.0.1.

By default it answers like the real service over a small in-memory web: it checks the bearer key,
keeps pages from ``include_domains`` (when given) that share a word with the query, scores them by
the share of query words they contain, and returns ``{"results": [{"title", "url", "content",
"score"}], ...}`` best first, cut to ``max_results``. Tests queue other replies through ``enqueue``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlparse

from tests.fakes.http_server import FakeHTTPServer, FakeResponse, RecordedRequest

SEARCH_PATH = "/search"
FAKE_TAVILY_KEY = "tvly-test-key"


@dataclass(frozen=True)
class WebPage:
    url: str
    title: str
    content: str


DEFAULT_PAGES: tuple[WebPage, ...] = (
    WebPage(
        "https://qdrant.tech/documentation/concepts/hybrid-queries/",
        "Hybrid queries - Qdrant",
        "Qdrant fuses dense and sparse search results with reciprocal rank fusion (RRF).",
    ),
    WebPage(
        "https://en.wikipedia.org/wiki/Reciprocal_rank_fusion",
        "Reciprocal rank fusion - Wikipedia",
        "Reciprocal rank fusion combines ranked lists: score = sum of 1 / (k + rank).",
    ),
    WebPage(
        "https://docs.cohere.com/docs/rerank",
        "Rerank - Cohere",
        "A rerank model orders documents by relevance to a query.",
    ),
    WebPage(
        "https://example.org/cooking/bread",
        "Sourdough bread",
        "Bake the bread at 230 degrees for forty minutes.",
    ),
)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _in_domains(url: str, domains: Sequence[str]) -> bool:
    host = urlparse(url).hostname or ""
    return any(host == d or host.endswith("." + d) for d in domains)


def search_reply(
    request: RecordedRequest, pages: Sequence[WebPage] = DEFAULT_PAGES, api_key: str = FAKE_TAVILY_KEY
) -> FakeResponse:
    """What the fake service answers to one search request when no reply is queued."""
    if request.headers.get("Authorization") != f"Bearer {api_key}":
        return FakeResponse(
            status=401, json_body={"detail": {"error": "Unauthorized: missing or invalid API key."}}
        )
    payload = request.json()
    query_words = _words(payload["query"])
    domains = payload.get("include_domains") or []
    results = []
    for page in pages:
        if domains and not _in_domains(page.url, domains):
            continue
        shared = query_words & _words(page.title + " " + page.content)
        if shared:
            score = len(shared) / len(query_words)
            results.append({"title": page.title, "url": page.url, "content": page.content, "score": score})
    results.sort(key=lambda r: -r["score"])
    return FakeResponse(
        json_body={
            "query": payload["query"],
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": results[: payload.get("max_results", 5)],
            "response_time": 0.01,
        }
    )


@contextmanager
def fake_tavily_server(
    pages: Sequence[WebPage] = DEFAULT_PAGES, api_key: str = FAKE_TAVILY_KEY
) -> Iterator[FakeHTTPServer]:
    """A running fake Tavily service; point ``Settings.tavily_base_url`` at ``server.base_url``."""
    with FakeHTTPServer() as server:
        server.set_default("POST", SEARCH_PATH, lambda request: search_reply(request, pages, api_key))
        yield server
