"""Choose the complexity classifier named by ``settings.graph.router``."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models import BaseChatModel

from core.settings import Settings
from graphs.rag.classifier.base import ComplexityClassifier
from graphs.rag.classifier.local import FeatureComplexityClassifier, load_router_weights


def get_classifier(settings: Settings, llm: Callable[[], BaseChatModel]) -> ComplexityClassifier:
    """``local``: the trained no-LLM classifier; ``llm``: the chat model with structured output;
    ``auto``: whichever ``bench/router.py`` measured as more accurate per millisecond (recorded as
    ``auto_choice`` in the router weights). ``llm`` is a factory so the model loads only if used."""
    router = settings.graph.router
    if router == "auto":
        router = load_router_weights().auto_choice
    if router == "llm":
        from graphs.rag.classifier.llm import LLMComplexityClassifier

        return LLMComplexityClassifier(llm())
    return FeatureComplexityClassifier.from_settings(settings)
