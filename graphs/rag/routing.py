"""Pure edge functions: state (and the loop bounds in ``GraphSettings``) in, the next node's name out.

Every loop is decided here by comparing its own counter with its own bound, never by LangGraph's
recursion limit: IRCoT (``ircot_steps``), IsSup regeneration (``support_retries``), IsUse re-retrieval
(``usefulness_retries``) and CRAG's knowledge-base retry (``crag_retries``). Above them all, the
question's budget (``within_budget``): an edge that would do more work once it is spent goes to
``stop_on_budget`` instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from core.settings import GraphSettings
from graphs.rag.answer_checks import FailedCheck, next_step
from graphs.rag.state import RagState
from tools.knowledge_base.text_units import detect_language


def after_start(state: RagState) -> Literal["contextualize", "route_question"]:
    """Rewrite the question only when the thread has earlier messages."""
    return "contextualize" if len(state.get("messages") or []) > 1 else "route_question"


def after_route(
    state: RagState,
) -> Literal["generate_direct", "reuse_or_retrieve", "transform_query", "retrieve"]:
    route = state.get("route")
    if route == "direct":
        return "generate_direct"
    if state.get("previous_context"):
        return "reuse_or_retrieve"
    return "transform_query" if route == "single" else "retrieve"


def after_reuse(state: RagState) -> Literal["check_answerable", "transform_query", "retrieve"]:
    if state.get("reused_previous_context"):
        return "check_answerable"
    return "transform_query" if state.get("route") == "single" else "retrieve"


def after_retrieve(
    state: RagState, bounds: GraphSettings
) -> Literal["grade_retrieval", "ircot_reason", "expand_context"]:
    if state.get("route") != "iterative":
        return "grade_retrieval"
    if state.get("reasoning_done") or state.get("ircot_steps", 0) >= bounds.max_ircot_steps:
        return "expand_context"
    return "ircot_reason"


def after_ircot(state: RagState) -> Literal["retrieve", "expand_context"]:
    """Search for the new reasoning sentence unless the reasoning is done (the bound is checked after it)."""
    return "expand_context" if state.get("reasoning_done") else "retrieve"


def after_grade(state: RagState) -> Literal["expand_context", "web_search", "crag_retry", "refuse"]:
    action = state.get("crag_action")
    if action in ("web_search", "refine_and_web"):
        return "web_search"
    if action == "retry_kb":
        return "crag_retry"
    if action == "refuse":
        return "refuse"
    return "expand_context"


def after_web(state: RagState, bounds: GraphSettings) -> Literal["expand_context", "crag_retry", "refuse"]:
    """With nothing from the web nor the knowledge base: retry the knowledge base within its bound."""
    if state.get("hits"):
        return "expand_context"
    return "crag_retry" if state.get("crag_retries", 0) < bounds.max_crag_retries else "refuse"


def after_refine(state: RagState) -> Literal["check_answerable", "refuse"]:
    return "check_answerable" if state.get("context") else "refuse"


def not_found_retry(state: RagState, bounds: GraphSettings) -> Literal["usefulness_retry", "refuse"]:
    """The passages do not hold the answer: another retrieval within its bound, then a refusal."""
    return (
        "usefulness_retry" if state.get("usefulness_retries", 0) < bounds.max_usefulness_retries else "refuse"
    )


def after_answerable(
    state: RagState, bounds: GraphSettings
) -> Literal["generate_answer", "usefulness_retry", "refuse"]:
    return not_found_retry(state, bounds) if state.get("generator_refused") else "generate_answer"


def after_generate(
    state: RagState, bounds: GraphSettings
) -> Literal["check_support", "usefulness_retry", "refuse"]:
    """A generator that found no answer in the passages asks for another retrieval, within its bound."""
    return "check_support" if not state.get("generator_refused") else not_found_retry(state, bounds)


def after_support(
    state: RagState, bounds: GraphSettings
) -> Literal["regenerate_answer", "usefulness_retry", "finalize_answer", "refuse"]:
    """The first failed answer check whose loop has room (``answer_checks``); else the answer is final,
    unless the judge found no sentence of it supported."""
    failures: list[FailedCheck] = list(state.get("failed_checks") or [])  # type: ignore[arg-type]
    step = next_step(state, failures, bounds)
    if step is not None:
        return step
    return "refuse" if no_sentence_survives(state) else "finalize_answer"


# Edges ending the turn pass through a spent budget: they do no more work.
TURN_ENDS = frozenset({"finalize_answer", "refuse"})


def budget_spent(state: RagState, now: float | None = None) -> dict[str, float]:
    """What the turn has spent so far, in the budget's own terms."""
    now = time.time() if now is None else now
    return {
        "seconds": now - (state.get("turn_started_at") or now),
        "llm_calls": state.get("llm_calls", 0),
        "llm_tokens": state.get("llm_input_tokens", 0) + state.get("llm_output_tokens", 0),
    }


def budget_exhausted_by(state: RagState, now: float | None = None) -> str | None:
    """Which limit of the turn's budget is reached ("llm_calls: 20 of 20"), or None."""
    budget = state.get("budget") or {}
    for name, used in budget_spent(state, now).items():
        limit = budget.get(name)
        if limit is not None and used >= limit:
            shown = f"{used:.1f}" if name == "seconds" else str(used)
            return f"{name}: {shown} of {limit:g}"
    return None


def within_budget(edge: Callable[..., str]) -> Callable[..., str]:
    """``edge``, except that once the budget is spent any step but the turn's end is ``stop_on_budget``."""

    def guarded(state: RagState, *args: Any, **kwargs: Any) -> str:
        chosen = edge(state, *args, **kwargs)
        if chosen in TURN_ENDS or budget_exhausted_by(state) is None:
            return chosen
        return "stop_on_budget"

    return named_after(edge, guarded)


def named_after(edge: Callable[..., str], guarded: Callable[..., str]) -> Callable[..., str]:
    """``guarded`` named after the edge it wraps (graph drawings and traces), without its annotations:
    LangGraph would read them as the wrapper's and fail to resolve a partial's."""
    guarded.__name__ = getattr(edge, "__name__", None) or getattr(edge, "func", edge).__name__
    return guarded


# Where a question escalated from 'direct' only because the documents might hold it leaves its one
# retrieval pass without an answer: a refusal, or another pass (CRAG's retry, IsUse's re-retrieval).
NO_ANSWER_FROM_THIS_PASS = frozenset({"refuse", "crag_retry", "usefulness_retry"})


def direct_when_unanswered(edge: Callable[..., str], translate_first: bool = False) -> Callable[..., str]:
    """``edge``, except that a question escalated from 'direct' only because the documents might hold
    it (``direct_fallback``) gets one retrieval pass: where that pass gives no answer, the model
    answers from memory, as it would have without the documents, instead of searching again.

    With ``translate_first`` (``graph.retry_across_languages``), a pass whose search found documents in
    another language than the question's may still retry once, translated: a Chinese question over an
    English handbook beside a Chinese manual finds only the manual, in its own language."""

    def guarded(state: RagState, *args: Any, **kwargs: Any) -> str:
        chosen = edge(state, *args, **kwargs)
        if chosen in NO_ANSWER_FROM_THIS_PASS and state.get("direct_fallback"):
            if translate_first and chosen != "refuse" and untried_language(state):
                return chosen
            return "generate_direct"
        return chosen

    return named_after(edge, guarded)


def untried_language(state: RagState) -> bool:
    """The last search found documents in another language than the question's, and no query of this
    turn was written in that language yet."""
    language = state.get("language", "en")
    others = {found for found in state.get("passage_languages") or [] if found != language}
    tried = {"zh" if detect_language(q) == "zh" else "en" for q in state.get("queries_issued") or []}
    return bool(others - tried)


def after_budget_stop(state: RagState) -> Literal["finalize_answer", "refuse"]:
    """The draft written so far is the best answer there is; without one the turn refuses."""
    has_draft = bool(state.get("answer_draft")) and not state.get("generator_refused")
    return "finalize_answer" if has_draft and not no_sentence_survives(state) else "refuse"


def no_sentence_survives(state: RagState) -> bool:
    """The judge found every sentence unsupported: finalize_answer would remove them all."""
    verdicts = [v["verdict"] for v in state.get("support") or []]
    return bool(verdicts) and all(v == "not" for v in verdicts)
