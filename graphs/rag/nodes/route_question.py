"""Adaptive-RAG routing: direct, single or iterative, from the classifier or a caller-forced route."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from core.errors import ProviderUnavailable
from graphs.rag.nodes._question_facts import facts_of
from graphs.rag.nodes._step import records_step
from graphs.rag.nodes.retrieve import search_and_rerank
from graphs.rag.resources import Resources
from graphs.rag.run_context import RunContext, run_context
from graphs.rag.state import RagState


def probe_knowledge_base(
    question: str, groups: list[str], resources: Resources
) -> tuple[str | None, dict[str, Any]]:
    """One search and rerank, no LLM call: does a passage the caller may read answer ``question`` well
    enough that CRAG would grade it 'correct'? Returns the reason to escalate (None: stay direct) and the
    probe's facts for the trace; ``best_score`` is what a caller reads to retrieve first anyway."""
    reranker = resources.reranker
    if not reranker.calibrated:
        return None, {"skipped": f"reranker '{reranker.name}' has no calibrated scores"}
    try:
        hits, facts = search_and_rerank(resources, [question], [question], groups, 1)
    except ProviderUnavailable as exc:
        return None, {"skipped": f"knowledge base unavailable: {exc}"}
    upper = resources.options.graph.crag_upper
    best = hits[0].rerank_score if hits and hits[0].rerank_score is not None else 0.0
    probe = {**facts, "best_score": round(best, 4), "threshold": upper}
    if hits:
        probe["best_passage"] = {"chunk_id": hits[0].chunk_id, "title": hits[0].title}
    if best <= upper:
        return None, probe
    return (
        f"a passage in the knowledge base scores {best:.2f} for it (above graph.crag_upper {upper:.2f})",
        probe,
    )


def retrieve_first(probe: dict[str, Any], resources: Resources) -> str | None:
    """A probe between CRAG's two bars cannot tell a document question in the user's own words
    ("Who approves my holiday?", 0.47) from general knowledge ("What is 15 times 4?", 0.28): with
    ``graph.direct_retrieves_first`` such a question gets one retrieval pass and keeps the direct
    answer as its fallback (bench.direct_probe --questions paraphrased, bench.direct_fallback)."""
    graph = resources.options.graph
    best = probe.get("best_score")
    if not graph.direct_retrieves_first or best is None or best <= graph.crag_lower:
        return None
    return (
        f"a passage scores {best:.2f} (above graph.crag_lower {graph.crag_lower:.2f}): the documents may "
        "hold it, so retrieve first and answer from memory only if they do not"
    )


@records_step
def route_question(
    state: RagState, config: RunnableConfig, *, resources: Resources, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Pick the route. A 'direct' verdict escalates to 'single' (Self-RAG's Retrieve decision) when the
    classifier is not confident enough, the question names the user's documents, it asks about a given
    year or the latest facts (the model's memory is no source for those), or it is a follow-up question
    in a conversation whose answers came from the documents ("At what temperature?"), or the knowledge
    base holds a passage that answers it (a cookbook's "How long does the apple cake bake?" was answered
    from memory), or one that may (then the direct answer is the fallback of a refusal); a forced route
    is kept."""
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
    fallback = False
    probe: dict[str, Any] | None = None
    if route == "direct":
        bound = resources.options.graph.direct_min_confidence
        facts = facts_of(state)
        if facts.names_documents:
            escalated = "the question names the user's documents"
        elif facts.time_sensitive:
            escalated = "the question asks about a given year or the latest facts"
        elif state.get("previous_context") and facts.message_is_question:
            escalated = "a follow-up question in a conversation answered from the documents"
        elif verdict.confidence < bound:
            escalated = f"classifier confidence {verdict.confidence:.2f} below graph.direct_min_confidence {bound:.2f}"
        elif facts.is_question:
            escalated, probe = probe_knowledge_base(
                question, run_context(runtime, config).groups(resources.options), resources
            )
            if escalated is None and (escalated := retrieve_first(probe, resources)):
                fallback = True
        if escalated:
            route, reason = "single", f"{reason}; escalated from direct: {escalated}"
    decision: dict[str, Any] = {
        "route": route,
        "confidence": verdict.confidence,
        "classifier": classifier.name,
        "classifier_route": verdict.route,
        "reason": reason,
    }
    if escalated:
        decision["escalated"] = escalated
    if fallback:
        decision["direct_fallback"] = True
    if probe is not None:
        decision["knowledge_base_probe"] = probe
    return {
        "route": route,
        "route_confidence": verdict.confidence,
        "route_reason": reason,
        "direct_fallback": fallback,
        "decision": decision,
    }
