"""Choose the complexity classifier named by ``settings.graph.router``."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models import BaseChatModel

from agent.settings import Settings
from graphs.rag.classifier.base import ComplexityClassifier
from graphs.rag.classifier.local import FeatureComplexityClassifier


def get_classifier(settings: Settings, llm: Callable[[], BaseChatModel]) -> ComplexityClassifier:
    """``local`` (and ``auto``, until a measurement says otherwise): the feature classifier, no LLM call;
    ``llm``: the chat model with structured output. ``llm`` is a factory so the model loads only if used."""
    if settings.graph.router == "llm":
        from graphs.rag.classifier.llm import LLMComplexityClassifier

        return LLMComplexityClassifier(llm())
    return FeatureComplexityClassifier()
