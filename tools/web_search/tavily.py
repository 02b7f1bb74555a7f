"""Tavily web search through ``tavily-python``, used when TAVILY_API_KEY is set.

``TavilyClient(api_base_url=...)`` accepts another base URL (``settings.tavily_base_url``, e.g. a
proxy or the fake service in the tests). The client raises ``UsageLimitExceededError`` on 429 without
the response, so each call runs on its own ``requests`` session whose response hook records the
``Retry-After`` header for the backoff.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import requests
from pydantic import BaseModel, Field, ValidationError
from tavily import TavilyClient
from tavily.errors import (
    BadRequestError,
    ForbiddenError,
    InvalidAPIKeyError,
    UsageLimitExceededError,
)
from tavily.errors import TimeoutError as TavilyTimeout

from core.errors import ConfigError
from core.settings import WebSearchSettings
from tools._hosted_retry import (
    Classifier,
    Permanent,
    RetryPolicy,
    Transient,
    call_with_retries,
    parse_retry_after,
)
from tools.knowledge_base.records import Hit
from tools.web_search.base import WebSearch

PROVIDER = "tavily web search"
# Tavily's own limit on max_results.
MAX_RESULTS_LIMIT = 20


class _TavilyResult(BaseModel):
    url: str = Field(min_length=1)
    title: str = ""
    content: str = ""
    score: float = 0.0


class _TavilyReply(BaseModel):
    results: list[_TavilyResult]


def web_chunk_id(url: str) -> str:
    """A stable id for a web result: ``web:`` and the first 16 hex digits of the URL's SHA-1."""
    return "web:" + hashlib.sha1(url.encode("utf-8")).hexdigest()[:16]


def _classify(timeout_s: float, retry_after: list[float | None]) -> Classifier:
    """Sorts the client's failures: 429/5xx/timeouts/connection errors are retried, the rest are not."""

    def classify(exc: Exception) -> Transient | Permanent | None:
        if isinstance(exc, UsageLimitExceededError):
            return Transient(
                f"HTTP 429 (rate limited) {exc}".strip(), retry_after[-1] if retry_after else None
            )
        if isinstance(exc, TavilyTimeout):
            return Transient(f"no reply within {timeout_s:g}s (web.timeout_s)")
        if isinstance(exc, requests.exceptions.JSONDecodeError):
            return Permanent(f"malformed JSON in the reply: {exc}")
        if isinstance(exc, requests.HTTPError) and exc.response is not None:
            status = exc.response.status_code
            if status >= 500:
                return Transient(f"HTTP {status}", parse_retry_after(exc.response.headers.get("Retry-After")))
            return Permanent(f"HTTP {status}: {exc.response.text[:200]}")
        if isinstance(exc, InvalidAPIKeyError | ForbiddenError):
            return Permanent(f"the service rejected TAVILY_API_KEY: {exc}")
        if isinstance(exc, BadRequestError):
            return Permanent(f"bad request: {exc}")
        if isinstance(exc, requests.ConnectionError | requests.Timeout):
            return Transient(f"connection failed: {exc}")
        if isinstance(exc, ValidationError):
            return Permanent(f"malformed reply: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}")
        return None

    return classify


class TavilyWebSearch(WebSearch):
    """Web search through Tavily with bounded retries; fails as ``ProviderUnavailable``."""

    name = "tavily"

    def __init__(self, options: WebSearchSettings, *, api_key: str | None, base_url: str | None = None) -> None:
        if not api_key:
            raise ConfigError("Tavily web search needs TAVILY_API_KEY (settings.tavily_api_key)")
        self.options = options
        self._api_key = api_key
        self._base_url = base_url
        self._policy = RetryPolicy(options.max_retries, options.max_retry_wait_s)

    def search(self, query: str, max_results: int, include_domains: Sequence[str] = ()) -> list[Hit]:
        """At most ``max_results`` (1..20) web hits, best first, de-duplicated by URL.

        ``include_domains`` empty means ``web.include_domains``. Raises ValueError for a blank query and
        ``ProviderUnavailable`` when the service fails after ``web.max_retries`` retries.
        """
        if not query.strip():
            raise ValueError("web search query is empty")
        max_results = max(1, min(max_results, MAX_RESULTS_LIMIT))
        domains = list(include_domains) or list(self.options.include_domains)
        timeout_s = self.options.timeout_s
        retry_after: list[float | None] = []

        def record_retry_after(response: requests.Response, *args: object, **kwargs: object) -> None:
            retry_after.append(parse_retry_after(response.headers.get("Retry-After")))

        with requests.Session() as session:
            session.hooks["response"].append(record_retry_after)
            client = TavilyClient(
                api_key=self._api_key,
                api_base_url=self._base_url,
                session=session,
            )

            def ask() -> _TavilyReply:
                reply = client.search(
                    query,
                    max_results=max_results,
                    include_domains=domains or None,
                    timeout=timeout_s,
                )
                return _TavilyReply.model_validate(reply)

            reply = call_with_retries(PROVIDER, ask, _classify(timeout_s, retry_after), self._policy)
        return self._to_hits(reply, max_results)

    @staticmethod
    def _to_hits(reply: _TavilyReply, max_results: int) -> list[Hit]:
        hits: list[Hit] = []
        seen: set[str] = set()
        for result in reply.results:
            if result.url in seen:
                continue
            seen.add(result.url)
            hits.append(
                Hit(
                    chunk_id=web_chunk_id(result.url),
                    doc_id=result.url,
                    text=result.content,
                    score=result.score,
                    source=result.url,
                    title=result.title,
                    url=result.url,
                    origin="web",
                )
            )
        return hits[:max_results]
