"""Everything the graph's nodes call, behind one object: built lazily from settings, injectable in tests.

A node never imports a provider factory itself; it asks ``Resources`` (``resources.llm``,
``resources.search(...)``), and reads the settings values it uses from ``resources.options`` (never the
whole ``Settings``, which only this factory holds). Each collaborator is created on first use, so a direct answer never opens
the knowledge base and a run without web search never builds a web client. Pass any collaborator to
the constructor to replace it (tests inject scripted models and small corpora this way).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
from langchain_core.language_models import BaseChatModel

from core.errors import ProviderUnavailable
from core.settings import Settings
from graphs.rag.classifier.base import ComplexityClassifier
from graphs.rag.node_options import NodeOptions
from tools.knowledge_base.records import Hit
from tools.rerank.base import Reranker
from tools.web_search.base import WebSearch

if TYPE_CHECKING:
    from tools.knowledge_base.knowledge_base import KnowledgeBase
    from tools.providers.embedder_base import Embedder


class SearchFn(Protocol):
    def __call__(self, queries: Sequence[str], groups: Sequence[str], top_k: int) -> list[Hit]:
        """Hits for the fused ``queries`` visible to ``groups``, best first, at most ``top_k``."""
        ...


class ExpandFn(Protocol):
    def __call__(self, hits: Sequence[Hit], groups: Sequence[str]) -> list[Hit]:
        """Seed hits plus their neighbours / parents / linked rows, in document order."""
        ...


_UNSET: Any = object()


class Resources:
    """The graph's collaborators. Unset ones are built from ``settings`` on first use (thread-safe)."""

    def __init__(
        self,
        settings: Settings,
        *,
        llm: BaseChatModel | None = None,
        knowledge_base: KnowledgeBase | None = None,
        search: SearchFn | None = None,
        reranker: Reranker | None = None,
        expand: ExpandFn | None = None,
        web: WebSearch | None = _UNSET,
        classifier: ComplexityClassifier | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self._settings = settings
        self.options = NodeOptions.from_settings(settings)
        self._llm = llm
        self._knowledge_base = knowledge_base
        self._search = search
        self._reranker = reranker
        self._expand = expand
        self._web = web  # None = explicitly no web search
        self._classifier = classifier
        self._embedder = embedder
        self._owns_knowledge_base = False
        self._lock = threading.RLock()

    # --- models ------------------------------------------------------------------------------------
    @property
    def llm(self) -> BaseChatModel:
        with self._lock:
            if self._llm is None:
                from tools.providers.chat_factory import get_chat_model

                self._llm = get_chat_model(self._settings)
            return self._llm

    @property
    def llm_is_local(self) -> bool:
        """Whether ``llm`` is the bundled llama.cpp model (its yes/no cut-offs are calibrated for it)."""
        from tools.providers.chat_local import LocalLlamaChatModel

        return isinstance(self.llm, LocalLlamaChatModel)

    @property
    def support_verifier(self) -> Literal["judge", "features"]:
        """``graph.support_verifier`` with 'auto' resolved: the fitted no-judge verifier only where its
        inputs are the ones it was fitted on (the bundled model's P(NOT_FOUND), the offline reranker's
        scores); the judge for a hosted model or another reranker."""
        chosen = self.options.graph.support_verifier
        if chosen != "auto":
            return chosen
        return "features" if self.llm_is_local and self._reranker_is_offline() else "judge"

    def _reranker_is_offline(self) -> bool:
        """Whether the reranker is the offline one: the built one (inside the fusion blend the factory
        wraps it in), or, before it is built, the one the settings choose (building it opens the index)."""
        from tools.rerank.factory import choose_reranker_provider
        from tools.rerank.fusion_blend import FusionBlendReranker
        from tools.rerank.offline import OfflineReranker

        reranker = self._reranker
        if reranker is None:
            return choose_reranker_provider(self._settings) == "offline"
        if isinstance(reranker, FusionBlendReranker):
            reranker = reranker.inner
        return isinstance(reranker, OfflineReranker)

    @property
    def classifier(self) -> ComplexityClassifier:
        with self._lock:
            if self._classifier is None:
                from graphs.rag.classifier.factory import get_classifier

                self._classifier = get_classifier(self._settings, lambda: self.llm)
            return self._classifier

    @property
    def embedder(self) -> Embedder:
        """The embedder used to score strips: the knowledge base's own when it is open (already loaded)."""
        with self._lock:
            if self._embedder is None:
                if self._knowledge_base is not None:
                    self._embedder = self._knowledge_base.embedder
                else:
                    from tools.providers.embedder_factory import get_embedder

                    self._embedder = get_embedder(self._settings)
            return self._embedder

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors for ``texts``, through the knowledge base's persistent embedding cache when
        it belongs to the same model (strips of a chunk recur across questions: embed them once)."""
        embedder = self.embedder
        kb = self._knowledge_base
        if kb is not None and kb.embed_cache.model_name == embedder.name:
            vectors, _ = kb.embed_cache.embed(texts, embedder.embed_passages)
            return vectors
        return embedder.embed_passages(texts)

    # --- knowledge base and retrieval ---------------------------------------------------------------
    @property
    def knowledge_base(self) -> KnowledgeBase:
        with self._lock:
            if self._knowledge_base is None:
                from tools.knowledge_base.knowledge_base import KnowledgeBase

                self._knowledge_base = KnowledgeBase.open(self._settings)
                self._owns_knowledge_base = True
            return self._knowledge_base

    def search(self, queries: Sequence[str], groups: Sequence[str], top_k: int) -> list[Hit]:
        """Hybrid search over the knowledge base (several queries fused with RRF), as ``groups``."""
        if self._search is not None:
            return self._search(queries, groups, top_k)
        from tools.search import SearchRequest, hybrid_search

        request = SearchRequest(queries=list(queries)[:8], top_k=top_k)
        return hybrid_search(request, self.knowledge_base, groups)

    @property
    def reranker(self) -> Reranker:
        with self._lock:
            if self._reranker is None:
                from tools.rerank.factory import get_reranker

                # The offline reranker reads passage vectors from the knowledge base's cache.
                self._reranker = get_reranker(self._settings, kb=self.knowledge_base)
            return self._reranker

    def expand(self, hits: Sequence[Hit], groups: Sequence[str]) -> list[Hit]:
        """Context around the kept hits (``expand_context``); web hits pass through."""
        if self._expand is not None:
            return self._expand(hits, groups)
        from tools.expand_context import expand_context

        return expand_context(hits, self.knowledge_base, groups, self._settings.expand)

    @property
    def web(self) -> WebSearch | None:
        """The web search provider, or None when none is configured (no key, or provider 'none')."""
        with self._lock:
            if self._web is _UNSET:
                try:
                    from tools.web_search.factory import get_web_search

                    web = get_web_search(self._settings)
                    self._web = web if web.available else None
                except ProviderUnavailable:
                    self._web = None
            return self._web

    def close(self) -> None:
        """Close what this object opened itself (an injected knowledge base belongs to its caller)."""
        with self._lock:
            if self._owns_knowledge_base and self._knowledge_base is not None:
                self._knowledge_base.close()
                self._knowledge_base = None
                self._owns_knowledge_base = False
