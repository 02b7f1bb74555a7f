"""The knowledge base handle: the store, the embedder, the sparse encoder and the embedding cache, opened
together from settings so every reader and writer sees the same index with the same models."""

from __future__ import annotations

from dataclasses import dataclass

from core.settings import Settings
from tools.knowledge_base.embed_cache import EmbeddingCache
from tools.knowledge_base.sparse import SparseEncoder
from tools.knowledge_base.store.base import VectorStore
from tools.knowledge_base.store.factory import open_store
from tools.providers.embedder_base import Embedder
from tools.providers.embedder_factory import get_embedder


@dataclass
class KnowledgeBase:
    """An open knowledge base; a context manager that closes the store and the cache."""

    settings: Settings
    store: VectorStore
    embedder: Embedder
    sparse: SparseEncoder
    embed_cache: EmbeddingCache

    @classmethod
    def open(
        cls, settings: Settings, *, embedder: Embedder | None = None, store: VectorStore | None = None
    ) -> KnowledgeBase:
        """Open the collection for ``settings`` (created if missing). Raises ConfigError when the index was
        built with another embedder, ProviderUnavailable when the store cannot be reached or is locked."""
        embedder = embedder or get_embedder(settings)
        store = store or open_store(settings)
        try:
            # an index keeps the tokenizer it was built with: an upgrade never strands an index
            built = store.index_identity()
            sparse = SparseEncoder.for_index(
                built.sparse_encoder if built else None,
                fold_chinese_script=settings.search.fold_chinese_script,
            )
            store.sparse_encoder = sparse.name
            store.ensure_collection(embedder.dim, embedder.name)
            cache = EmbeddingCache(settings.home / "embeddings.sqlite", embedder.name, embedder.dim)
        except BaseException:
            store.close()
            raise
        return cls(settings=settings, store=store, embedder=embedder, sparse=sparse, embed_cache=cache)

    def close(self) -> None:
        """Flush and release the store and the cache."""
        try:
            self.store.close()
        finally:
            self.embed_cache.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
