"""Choose the embedder by settings: the bundled multilingual-e5 (default) or OpenAI-compatible embeddings.

There is deliberately no ``auto`` here (unlike the chat model): an index is bound to the embedder that
built it, so setting OPENAI_API_KEY must never switch embedders by itself.
"""

from __future__ import annotations

import threading

from core.settings import Settings
from tools.providers.embedder_base import Embedder

_CACHE: dict[tuple[object, ...], Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(settings: Settings) -> Embedder:
    """The configured embedder, built once per process per (provider, model, endpoint) configuration.

    Raises ConfigError for an incomplete OpenAI configuration (key, ``embedder.dim``) and
    ModelAssetError when the local model package is missing.
    """
    key = _cache_key(settings)
    with _CACHE_LOCK:
        embedder = _CACHE.get(key)
        if embedder is None:
            embedder = _build(settings)
            _CACHE[key] = embedder
    return embedder


def _cache_key(settings: Settings) -> tuple[object, ...]:
    cfg = settings.embedder
    if cfg.provider == "local":
        return ("local", cfg.num_threads)
    return (
        "openai",
        cfg.model,
        cfg.dim,
        cfg.base_url or settings.openai_base_url,
        settings.openai_api_key,
        cfg.timeout_s,
        cfg.max_retries,
    )


def _build(settings: Settings) -> Embedder:
    if settings.embedder.provider == "local":
        from tools.providers.embedder_local_e5 import LocalE5Embedder

        return LocalE5Embedder(num_threads=settings.embedder.num_threads)
    from tools.providers.embedder_openai import OpenAIEmbedder

    return OpenAIEmbedder.from_settings(settings)
