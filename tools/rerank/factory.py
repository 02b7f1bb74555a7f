"""Chooses the reranker from ``rerank.provider`` and the configured keys and paths."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from core.errors import ConfigError
from core.settings import Settings
from tools.rerank.base import Reranker
from tools.rerank.noop import NoopReranker

if TYPE_CHECKING:
    from tools.knowledge_base.knowledge_base import KnowledgeBase

# The offline reranker's default share of the fused order (rerank.fusion_weight unset): see settings.
OFFLINE_FUSION_WEIGHT = 0.5

ProviderChoice = Literal["cohere", "cross_encoder", "offline", "none"]
#: what a caller may ask for: a provider, or "auto" (chosen by the configured keys and paths)
RerankerChoice = ProviderChoice | Literal["auto"]


def choose_reranker_provider(settings: Settings) -> ProviderChoice:
    """The provider ``get_reranker`` builds. For "auto": Cohere when COHERE_API_KEY is set, else the
    cross-encoder when ``rerank.cross_encoder_path`` is set, else the offline default."""
    provider = settings.rerank.provider
    if provider != "auto":
        return provider
    if settings.cohere_api_key:
        return "cohere"
    if settings.rerank.cross_encoder_path is not None:
        return "cross_encoder"
    return "offline"


def get_reranker(
    settings: Settings,
    kb: KnowledgeBase | None = None,
    *,
    provider: RerankerChoice | None = None,
) -> Reranker:
    """Build the chosen reranker (``provider`` overrides ``rerank.provider``, e.g. a CLI flag). ConfigError
    when an explicitly chosen provider lacks its key or model (a configured cross-encoder that cannot
    load is an error too, not a silent fallback)."""
    choice: ProviderChoice = (
        provider if provider is not None and provider != "auto" else choose_reranker_provider(settings)
    )
    reranker = _build(choice, settings, kb)
    weight = settings.rerank.fusion_weight
    if weight is None:
        weight = OFFLINE_FUSION_WEIGHT if choice == "offline" else 0.0
    if weight > 0 and choice != "none":
        from tools.rerank.fusion_blend import FusionBlendReranker

        return FusionBlendReranker(reranker, weight)
    return reranker


def _build(choice: ProviderChoice, settings: Settings, kb: KnowledgeBase | None) -> Reranker:
    # Providers are imported when chosen: each pulls in its own client library or model.
    if choice == "none":
        return NoopReranker()
    if choice == "cohere":
        if not settings.cohere_api_key:
            raise ConfigError("rerank.provider is 'cohere' but COHERE_API_KEY is not set")
        from tools.rerank.cohere import CohereReranker

        return CohereReranker(
            settings.rerank, api_key=settings.cohere_api_key, base_url=settings.cohere_base_url
        )
    if choice == "cross_encoder":
        from tools.rerank.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(settings.rerank)
    from tools.providers.embedder_factory import get_local_e5_embedder
    from tools.rerank.offline import OfflineReranker

    return OfflineReranker(
        settings.rerank,
        kb=kb,
        embedder=get_local_e5_embedder(settings) if kb is None else None,  # a kb lends its own e5
        vector_cache_path=settings.home / "embeddings.sqlite",
    )
