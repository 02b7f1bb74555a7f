"""The LLM complexity classifier and the document-reference rule the router relies on.

(The local classifier's verdicts are trained and tested with its model, under its own tests.)"""

from __future__ import annotations

from core.settings import load_settings
from graphs.rag.classifier.factory import get_classifier
from graphs.rag.classifier.llm import LLMComplexityClassifier
from graphs.rag.classifier.signals import mentions_documents
from prompts import load_prompt
from tests.graphs.helpers import ScriptedChatModel


def test_document_references_are_recognised_in_english_and_chinese() -> None:
    assert mentions_documents("According to the handbook, what is 2 + 2?")
    assert mentions_documents("What does our policy say about remote work?")
    assert mentions_documents("文档里说年假有几天？")
    assert not mentions_documents("What is 2 + 2?")


def test_llm_classifier_returns_the_models_structured_verdict() -> None:
    llm = ScriptedChatModel(
        replies={
            "classify_question": '{"route": "iterative", "confidence": 0.8, "reason": "compares two films"}'
        }
    )
    decision = LLMComplexityClassifier(llm).classify("Which film came out first, A or B?")
    assert (decision.route, decision.confidence, decision.reason) == ("iterative", 0.8, "compares two films")
    assert "Which film came out first" in llm.calls[0][1][-1].text


def test_llm_classifier_prompt_defines_every_route() -> None:
    prompt = load_prompt("classify_question")
    for route in ("direct:", "single:", "iterative:"):
        assert route in prompt
    assert "Comparison questions are never" in prompt


def test_factory_builds_the_llm_classifier_when_asked() -> None:
    llm = ScriptedChatModel()
    assert isinstance(
        get_classifier(load_settings(graph={"router": "llm"}), lambda: llm), LLMComplexityClassifier
    )
