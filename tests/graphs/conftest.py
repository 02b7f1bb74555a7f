"""Fixtures for the agent-graph tests: one real knowledge base per session, graphs built around it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.settings import Settings, load_settings
from graphs.rag.checkpointer import open_checkpointer
from graphs.rag.classifier.base import ComplexityClassifier
from graphs.rag.graph import build_graph
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker, build_knowledge_base
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.providers.embedder_base import Embedder
from tools.providers.embedder_factory import get_local_e5_embedder
from tools.rerank.base import Reranker
from tools.web_search.base import WebSearch


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return get_local_e5_embedder(load_settings())


@pytest.fixture(scope="session")
def knowledge_base(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[KnowledgeBase]:
    settings = load_settings(home=tmp_path_factory.mktemp("graph-kb"))
    kb = build_knowledge_base(settings, embedder)
    yield kb
    kb.close()


GraphFactory = Callable[..., tuple[Any, Settings]]


@pytest.fixture
def make_graph(knowledge_base: KnowledgeBase, embedder: Embedder, tmp_path: Path) -> GraphFactory:
    """Build the real graph over the session knowledge base with a scripted LLM and reranker."""

    def make(
        llm: ScriptedChatModel,
        *,
        reranker: Reranker | None = None,
        web: WebSearch | None = None,
        classifier: ComplexityClassifier | None = None,
        checkpointer: Any = None,
        graph: dict[str, Any] | None = None,
        **settings_overrides: Any,
    ) -> tuple[Any, Settings]:
        # The corpus mixes English and Chinese, so every retry would also translate: only the tests of
        # that (test_retry_across_languages, test_crag) script the translation.
        graph = {"retry_across_languages": False, **(graph or {})}
        settings = load_settings(home=tmp_path / "home", graph=graph, **settings_overrides)
        if checkpointer == "settings":  # the one the settings name (SQLite at settings.threads_db)
            checkpointer = open_checkpointer(settings)
        resources = Resources(
            settings,
            llm=llm,
            knowledge_base=knowledge_base,
            reranker=reranker or ScriptedReranker(),
            web=web,
            classifier=classifier,
            embedder=embedder,
        )
        return build_graph(settings, resources=resources, checkpointer=checkpointer), settings

    return make
