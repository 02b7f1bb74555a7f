"""Cohere's hosted reranker (``rerank-v3.5`` or ``rerank.cohere_model``), used when COHERE_API_KEY is set.

Token budget: Cohere's tokenizer is not available offline, so passages are cut to an *approximate*
token count (one token per CJK character, about one per short word, more for long words) that leaves
room for the query inside ``rerank.max_tokens``. The same budget goes to the API as
``max_tokens_per_doc``, so the service's exact tokenizer enforces it too. The query is never cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import cohere
import httpx
from cohere.core.api_error import ApiError
from pydantic import BaseModel, Field, ValidationError

from core.errors import ConfigError, ProviderUnavailable
from core.settings import RerankSettings
from tools._hosted_retry import (
    Classifier,
    Permanent,
    RetryPolicy,
    Transient,
    call_with_retries,
    parse_retry_after,
)
from tools.knowledge_base.records import Hit
from tools.rerank._scoring import order_by_scores, passage_text
from tools.rerank.base import Reranker

PROVIDER = "cohere rerank"

# Room for the separators the service adds between query and passage.
PAIR_OVERHEAD_TOKENS = 4
# A passage keeps at least this many tokens even when a very long query leaves less room.
MIN_PASSAGE_TOKENS = 32

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN_PIECE = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")
# Subword tokenizers split long words: count one token per this many characters of a word.
_CHARS_PER_WORD_TOKEN = 6


def _piece_tokens(piece: str) -> int:
    return 1 + (len(piece) - 1) // _CHARS_PER_WORD_TOKEN


def approx_token_count(text: str) -> int:
    """An estimate of a subword tokenizer's count for ``text`` (no model needed)."""
    return sum(_piece_tokens(m.group()) for m in _TOKEN_PIECE.finditer(text))


def truncate_to_approx_tokens(text: str, budget: int) -> str:
    """The longest prefix of ``text`` ending on a whole piece whose approximate token count is within ``budget``."""
    used = 0
    end = 0
    for match in _TOKEN_PIECE.finditer(text):
        used += _piece_tokens(match.group())
        if used > budget:
            return text[:end]
        end = match.end()
    return text


def passage_budget(query: str, max_tokens: int) -> int:
    """Approximate tokens left for one passage once the query (kept whole) is in the pair."""
    return max(max_tokens - approx_token_count(query) - PAIR_OVERHEAD_TOKENS, MIN_PASSAGE_TOKENS)


class _RerankResult(BaseModel):
    index: int = Field(ge=0)
    relevance_score: float


class _RerankReply(BaseModel):
    results: list[_RerankResult]


def _classify(timeout_s: float) -> Classifier:
    """Sorts the SDK's failures: 429/5xx/timeouts/connection errors are retried, the rest are not."""

    def classify(exc: Exception) -> Transient | Permanent | None:
        if isinstance(exc, ApiError):
            status = exc.status_code or 0
            headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
            if 200 <= status < 300:
                # The SDK raises ApiError with the raw text when a 2xx body is not JSON.
                return Permanent(f"malformed JSON in the reply: {str(exc.body)[:120]!r}")
            if status == 429 or status >= 500:
                return Transient(f"HTTP {status}", parse_retry_after(headers.get("retry-after")))
            if status in (401, 403):
                return Permanent(f"HTTP {status}: the service rejected COHERE_API_KEY")
            return Permanent(f"HTTP {status}: {str(exc.body)[:200]}")
        if isinstance(exc, httpx.TimeoutException):
            return Transient(f"no reply within {timeout_s:g}s (rerank.timeout_s)")
        if isinstance(exc, httpx.TransportError):
            return Transient(f"connection failed: {exc}")
        if isinstance(exc, json.JSONDecodeError | ValidationError):
            return Permanent(f"malformed reply: {exc}")
        return None

    return classify


class CohereReranker(Reranker):
    """Reranks through Cohere's ``/v2/rerank`` with bounded retries; fails as ``ProviderUnavailable``."""

    name = "cohere"

    def __init__(self, options: RerankSettings, *, api_key: str | None, base_url: str | None = None) -> None:
        if not api_key:
            raise ConfigError("the Cohere reranker needs COHERE_API_KEY (settings.cohere_api_key)")
        self.options = options
        self.model = options.cohere_model
        # The SDK's own retries are off: ours honour Retry-After with a cap and count attempts.
        self._client = cohere.ClientV2(api_key=api_key, base_url=base_url, timeout=options.timeout_s, max_retries=0)
        self._policy = RetryPolicy(options.max_retries, options.max_retry_wait_s)

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        """Hits reordered by Cohere's relevance score (0..1), below ``rerank.threshold`` dropped, at most top_n."""
        hits = list(hits)
        if not hits or top_n <= 0:
            return []
        budget = passage_budget(query, self.options.max_tokens)
        documents = [truncate_to_approx_tokens(passage_text(hit), budget) for hit in hits]

        def ask() -> _RerankReply:
            response = self._client.rerank(
                model=self.model,
                query=query,
                documents=documents,
                top_n=len(documents),  # every score, so the threshold and top_n cut happen here
                max_tokens_per_doc=budget,
            )
            # The SDK builds its reply object without validation; check the shape ourselves.
            return _RerankReply.model_validate(response, from_attributes=True)

        reply = call_with_retries(PROVIDER, ask, _classify(self.options.timeout_s), self._policy)
        scores = self._scores_by_position(reply, len(hits))
        return order_by_scores(hits, scores, top_n, self.options.threshold)

    @staticmethod
    def _scores_by_position(reply: _RerankReply, count: int) -> list[float]:
        """One score per input hit; a reply naming an unknown or repeated index is malformed."""
        scores: list[float | None] = [None] * count
        for result in reply.results:
            if result.index >= count or scores[result.index] is not None:
                raise ProviderUnavailable(
                    PROVIDER, f"malformed reply: result index {result.index} is out of range or repeated"
                )
            scores[result.index] = result.relevance_score
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            raise ProviderUnavailable(PROVIDER, f"malformed reply: no score for documents {missing[:5]}")
        return [s for s in scores if s is not None]
