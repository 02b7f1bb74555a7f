"""OpenAI embeddings (or any OpenAI-compatible ``/v1/embeddings`` endpoint) behind the Embedder interface."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import openai

from core.errors import ConfigError, ProviderUnavailable
from core.settings import Settings
from tools.providers.embedder_base import Embedder
from tools.providers.openai_errors import describe_openai_failure

#: Known output sizes; other models need ``embedder.dim``.
KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
#: OpenAI's per-request input limit is 2048 texts; smaller batches keep each request well under it.
_REQUEST_BATCH = 256
_MAX_INPUT_TOKENS = 8191

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_ESTIMATE_UNITS = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]", re.UNICODE)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free BPE estimate: one per CJK character or punctuation mark, one per word plus one
    per further 8 letters (common English words are one BPE token, long ones split into pieces)."""
    return sum(1 + len(unit) // 8 for unit in _ESTIMATE_UNITS.findall(text))


class OpenAIEmbedder(Embedder):
    """Embeds through the ``openai`` client; vectors are L2-normalised here, whatever the server returns."""

    engine = "openai"

    def __init__(
        self,
        *,
        model: str,
        api_key: str,
        base_url: str | None,
        dim: int | None,
        timeout_s: float,
        max_retries: int,
    ) -> None:
        self.model = model
        self.max_tokens = _MAX_INPUT_TOKENS
        self._request_dimensions: int | None = None
        if dim is not None and model.startswith("text-embedding-3"):
            self._request_dimensions = dim  # v3 models shorten their vectors on request
        resolved_dim = dim or KNOWN_DIMS.get(model)
        if resolved_dim is None:
            raise ConfigError(
                f"embedder.dim must be set for the OpenAI embedding model '{model}' (its vector size)"
            )
        self.dim = resolved_dim
        self.name = f"openai/{model}/{self.dim}"
        self.base_url = base_url
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries
        )
        self._tiktoken_encoding: Any = None
        self._tiktoken_tried = False

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIEmbedder:
        base_url = settings.embedder.base_url or settings.openai_base_url
        api_key = settings.openai_api_key
        if not api_key:
            if not base_url:
                raise ConfigError(
                    "embedder.provider=openai needs OPENAI_API_KEY (or embedder.base_url for a compatible "
                    "server that needs no key)"
                )
            api_key = "unused"  # the client insists on a key; keyless local servers ignore it
        return cls(
            model=settings.embedder.model,
            api_key=api_key,
            base_url=base_url,
            dim=settings.embedder.dim,
            timeout_s=settings.embedder.timeout_s,
            max_retries=settings.embedder.max_retries,
        )

    def _provider_label(self) -> str:
        return f"OpenAI embeddings '{self.model}' at {self.base_url or 'api.openai.com'}"

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), _REQUEST_BATCH):
            rows.append(self._embed_request(texts[start : start + _REQUEST_BATCH]))
        return np.concatenate(rows)

    def _embed_request(self, batch: Sequence[str]) -> np.ndarray:
        # The API rejects empty strings; a single space embeds as "nothing" without failing the batch.
        inputs = [text if text.strip() else " " for text in batch]
        try:
            response = self._client.embeddings.create(
                model=self.model, input=inputs, dimensions=self._request_dimensions or openai.omit
            )
            data = sorted(response.data, key=lambda item: item.index)
            vectors = np.asarray([item.embedding for item in data], dtype=np.float32)
        except (openai.APIError, ValueError, TypeError, AttributeError) as exc:
            cause = describe_openai_failure(
                exc,
                timeout_setting="embedder.timeout_s",
                timeout_s=self._timeout_s,
                max_retries=self._max_retries,
            )
            raise ProviderUnavailable(
                self._provider_label(), cause or f"malformed response ({exc!r})"
            ) from exc
        if vectors.shape != (len(inputs), self.dim):
            raise ProviderUnavailable(
                self._provider_label(),
                f"expected {len(inputs)} vectors of size {self.dim} (embedder.dim), got shape {vectors.shape}",
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)  # one request for all, not one per query

    def count_tokens(self, text: str) -> int:
        """tiktoken's count for OpenAI's own endpoint; an estimate for other servers (other tokenizers)."""
        encoding = self._tiktoken()
        return (
            len(encoding.encode(text, disallowed_special=()))
            if encoding is not None
            else estimate_tokens(text)
        )

    def _tiktoken(self) -> Any:
        # tiktoken fetches its vocabulary on first use: only worth trying when we talk to OpenAI itself
        # (so we are online), and its vocabulary is only right for OpenAI's models.
        if not self._tiktoken_tried:
            self._tiktoken_tried = True
            if self.base_url is None:
                try:
                    import tiktoken

                    self._tiktoken_encoding = tiktoken.encoding_for_model(self.model)
                except Exception:  # noqa: BLE001 - any failure (offline, unknown model) means: estimate
                    self._tiktoken_encoding = None
        return self._tiktoken_encoding
