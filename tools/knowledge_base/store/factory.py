"""Choose the vector store by settings: the embedded engine by default, a Qdrant server when QDRANT_URL is set."""

from __future__ import annotations

from core.settings import Settings
from tools.knowledge_base.sparse import FOLDING_ENCODER
from tools.knowledge_base.store.base import VectorStore


def open_store(settings: Settings, *, sparse_encoder: str = FOLDING_ENCODER) -> VectorStore:
    """An open (not yet ensured) store for ``settings``: ``ServerStore`` when ``settings.qdrant.url`` is set
    (ProviderUnavailable naming QDRANT_URL if unreachable), else ``EdgeStore`` under ``settings.index_dir``."""
    if settings.qdrant.url:
        from tools.knowledge_base.store.server import ServerStore

        return ServerStore.connect(
            settings.qdrant.url,
            settings.qdrant.collection,
            sparse_encoder=sparse_encoder,
            api_key=settings.qdrant.api_key,
            timeout_s=settings.qdrant.timeout_s,
        )
    from tools.knowledge_base.store.edge import EdgeStore

    return EdgeStore(settings.index_dir, sparse_encoder=sparse_encoder)
