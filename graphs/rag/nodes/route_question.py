"""Adaptive-RAG routing: direct, single or iterative, from the classifier or a caller-forced route."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.classifier.signals import asks_time_sensitive_fact, mentions_documents
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState

_QUESTION_WORDS = re.compile(
    r"^\s*(who|whom|whose|what|which|when|where|why|how|is|are|was|were|do|does|did|can|could|will|"
    r"would|should|and|also)\b|[?？]\s*$|吗|呢|什么|哪|几|多少|谁|怎么|为什么|是否",
    re.IGNORECASE,
)


def is_a_question(message: str) -> bool:
    """A question (not thanks or a greeting): asked with a question word or a question mark."""
    return bool(_QUESTION_WORDS.search(message))


@records_step
def route_question(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """Pick the route. A 'direct' verdict escalates to 'single' (Self-RAG's Retrieve decision) when the
    classifier is not confident enough, the question names the user's documents, it asks about a given
    year or the latest facts (the model's memory is no source for those), or it is a follow-up question
    in a conversation whose answers came from the documents ("At what temperature?"); a forced route is
    kept."""
    question = state["standalone_question"]
    forced = state.get("route_request") or "auto"
    if forced != "auto":
        return {
            "route": forced,
            "route_confidence": 1.0,
            "route_reason": "route forced by the caller",
            "decision": {"route": forced, "confidence": 1.0, "reason": "route forced by the caller"},
        }
    classifier = resources.classifier
    verdict = classifier.classify(question)
    route, reason = verdict.route, verdict.reason
    escalated = None
    if route == "direct":
        bound = resources.settings.graph.direct_min_confidence
        if mentions_documents(question):
            escalated = "the question names the user's documents"
        elif asks_time_sensitive_fact(question):
            escalated = "the question asks about a given year or the latest facts"
        elif state.get("previous_context") and is_a_question(state["question"]):
            escalated = "a follow-up question in a conversation answered from the documents"
        elif verdict.confidence < bound:
            escalated = f"classifier confidence {verdict.confidence:.2f} below graph.direct_min_confidence {bound:.2f}"
        if escalated:
            route, reason = "single", f"{reason}; escalated from direct: {escalated}"
    decision = {
        "route": route,
        "confidence": verdict.confidence,
        "classifier": classifier.name,
        "classifier_route": verdict.route,
        "reason": reason,
    }
    if escalated:
        decision["escalated"] = escalated
    return {
        "route": route,
        "route_confidence": verdict.confidence,
        "route_reason": reason,
        "decision": decision,
    }
