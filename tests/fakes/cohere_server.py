"""A fake Cohere rerank API (``POST /v2/rerank``) on 127.0.0.1.

By default it answers like the real service: it checks the bearer key, scores every document by the
share of query words it contains, and returns ``{"results": [{"index", "relevance_score"}], ...}``
best first, cut to ``top_n``. Tests queue other replies (429, 500, delays, malformed JSON) through
``server.enqueue(...)``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from tests.fakes.http_server import FakeHTTPServer, FakeResponse, RecordedRequest

RERANK_PATH = "/v2/rerank"
FAKE_COHERE_KEY = "test-cohere-key"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def word_overlap_score(query: str, document: str) -> float:
    """The share of the query's words found in the document, in [0, 1]."""
    query_words = _words(query)
    if not query_words:
        return 0.0
    return len(query_words & _words(document)) / len(query_words)


def rerank_reply(request: RecordedRequest, api_key: str = FAKE_COHERE_KEY) -> FakeResponse:
    """What the fake service answers to one rerank request when no reply is queued."""
    if request.headers.get("Authorization") != f"Bearer {api_key}":
        return FakeResponse(status=401, json_body={"message": "invalid api token"})
    payload = request.json()
    documents = payload["documents"]
    scored = sorted(
        ((i, word_overlap_score(payload["query"], doc)) for i, doc in enumerate(documents)),
        key=lambda pair: (-pair[1], pair[0]),
    )
    top_n = payload.get("top_n") or len(documents)
    return FakeResponse(
        json_body={
            "id": str(uuid.uuid4()),
            "results": [{"index": i, "relevance_score": s} for i, s in scored[:top_n]],
            "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
        }
    )


@contextmanager
def fake_cohere_server(api_key: str = FAKE_COHERE_KEY) -> Iterator[FakeHTTPServer]:
    """A running fake Cohere service; point ``Settings.cohere_base_url`` at ``server.base_url``."""
    with FakeHTTPServer() as server:
        server.set_default("POST", RERANK_PATH, lambda request: rerank_reply(request, api_key))
        yield server
