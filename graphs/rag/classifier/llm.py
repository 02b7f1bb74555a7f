"""The LLM complexity classifier: one structured call with the route definitions in the prompt.

The definitions matter: without them the small local model called comparison questions "simple".
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from core.errors import StructuredOutputError
from graphs.rag.classifier.base import ComplexityClassifier, RouteDecision
from prompts import load_prompt


class LLMComplexityClassifier(ComplexityClassifier):
    """Asks the chat model for a ``RouteDecision``; a malformed reply falls back to 'single'."""

    name = "llm"

    def __init__(self, llm: BaseChatModel) -> None:
        self._structured = llm.with_structured_output(RouteDecision)

    def classify(self, question: str) -> RouteDecision:
        messages = [
            SystemMessage(load_prompt("classify_question")),
            HumanMessage(f"Question:\n<question>\n{question}\n</question>"),
        ]
        try:
            decision = self._structured.invoke(messages)
        except StructuredOutputError as exc:
            return RouteDecision(route="single", confidence=0.0, reason=f"classifier output unusable ({exc})")
        if not isinstance(decision, RouteDecision):
            decision = RouteDecision.model_validate(decision)
        return decision
