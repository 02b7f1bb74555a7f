"""The agent graph's state: one TypedDict, reducers where lists accumulate, a counter for every loop.

Values are plain JSON-able data (hits and passages are ``model_dump(mode="json")`` dicts) so a thread's
checkpoint can be stored by any LangGraph checkpointer and read back without custom types.

Per-turn fields say so beside their type (``PerTurn(default)``); ``start_turn`` resets them from
``turn_defaults()`` at the start of every question (``Overwrite`` bypasses the reducers), while
``messages`` and ``previous_context`` carry over between the turns of a thread.
"""

from __future__ import annotations

import copy
import operator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, Required, get_type_hints

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite
from typing_extensions import TypedDict  # pydantic needs this one before 3.12 (graph JSON schemas)

from core.vocabulary import CragAction, CragGrade, Route, RouteRequest


class StepEntry(TypedDict):
    """One node run, in plain terms: what it decided and how long it took (read by tracing)."""

    node: str
    started_at: str
    ms: float
    decision: dict[str, Any]


class ContextPassage(TypedDict):
    """One numbered passage given to the generator; ``[n]`` in the answer refers to it."""

    n: int
    chunk_id: str
    doc_id: str
    source: str
    title: str
    page: int | None
    url: str | None
    origin: Literal["kb", "web"]
    text: str


def merge_hits(current: list[dict[str, Any]], update: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Accumulate hits de-duplicated by chunk id, keeping the better-scored copy in first-seen order."""
    merged: dict[str, dict[str, Any]] = {h["chunk_id"]: h for h in current}
    for hit in update:
        known = merged.get(hit["chunk_id"])
        if known is None or _hit_score(hit) > _hit_score(known):
            merged[hit["chunk_id"]] = hit
    return list(merged.values())


def _hit_score(hit: dict[str, Any]) -> float:
    rerank = hit.get("rerank_score")
    return float(rerank if rerank is not None else hit.get("score", 0.0))


class RagInput(TypedDict):
    """What a caller passes in for one turn."""

    question: Required[str]
    route_request: NotRequired[RouteRequest | None]
    # The conversation so far, when the caller keeps it (no thread): earlier user and assistant turns.
    messages: NotRequired[list[AnyMessage]]


class RagOutput(TypedDict, total=False):
    """What a caller reads back (``Agent`` turns it into an ``Answer``)."""

    question: str
    standalone_question: str
    answer: str
    short_answer: str
    citations: list[dict[str, Any]]
    refused: bool
    refusal_reason: str | None
    budget_exhausted: str | None
    route: Route | None
    route_confidence: float | None
    crag_grade: CragGrade | None
    crag_action: CragAction | None
    support: list[dict[str, Any]]
    answers_question: bool | None
    queries_issued: list[str]
    llm_calls: int
    llm_input_tokens: int
    llm_output_tokens: int
    steps: list[StepEntry]
    messages: list[AnyMessage]


@dataclass(frozen=True)
class PerTurn:
    """Marks a state field that every turn starts afresh from ``default``.

    ``on_retrieval=True`` fields also start afresh when a retry retrieves again (``usefulness_retry``).
    Not callable, and placed before any reducer in ``Annotated[...]``: LangGraph reads a reducer from
    the last metadata item only.
    """

    default: Any
    on_retrieval: bool = False


class RagState(TypedDict, total=False):
    """The whole graph state. Loop counters are bounded by ``settings.graph.*`` (see routing.py).

    Fields marked ``PerTurn`` are reset by ``turn_defaults()`` (``start_turn``); the others persist
    across the turns of a thread (the conversation, the last context) or are set by ``start_turn``.
    """

    # The conversation (kept across turns) and this turn's question.
    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    route_request: RouteRequest | None  # a caller-forced route; consumed (set to None) at turn end
    standalone_question: str
    language: Literal["en", "zh"]
    # the question read once (nodes/_question_facts.QuestionFacts): written by start_turn, and again by
    # contextualize for a rewritten follow-up; no other node parses the question
    question_facts: Annotated[dict[str, Any] | None, PerTurn(None)]

    # Routing.
    route: Annotated[Route | None, PerTurn(None)]
    route_confidence: Annotated[float | None, PerTurn(None)]
    route_reason: Annotated[str, PerTurn("")]
    # a 'direct' question sent to retrieval because the documents might hold it: a refusal falls back
    # to the direct answer (graph.direct_retrieves_first)
    direct_fallback: Annotated[bool, PerTurn(False)]

    # Retrieval.
    query_transform: Annotated[str, PerTurn("none")]
    queries: Annotated[list[str], PerTurn([])]  # the queries of the latest retrieval
    queries_issued: Annotated[list[str], PerTurn([]), operator.add]  # every query this turn
    # the languages the latest search's candidates are written in: a retry also searches in the others
    passage_languages: Annotated[list[str], PerTurn([])]
    # names of the question that those candidates write in their own script ("Nanzhou" → "南州"): a
    # retry's translation of the question uses their spelling
    passage_spellings: Annotated[dict[str, str], PerTurn({})]
    hits: Annotated[list[dict[str, Any]], PerTurn([], on_retrieval=True), merge_hits]  # Hit dicts
    crag_grade: Annotated[CragGrade | None, PerTurn(None)]
    crag_action: Annotated[CragAction | None, PerTurn(None)]
    web_searched: Annotated[bool, PerTurn(False)]  # web search ran this turn (CRAG asks for it once)
    passages: Annotated[list[dict[str, Any]], PerTurn([], on_retrieval=True)]  # expanded hits, unrefined
    strips: Annotated[
        list[dict[str, Any]], PerTurn([], on_retrieval=True)
    ]  # kept strips: chunk_id, text, score
    context: Annotated[list[ContextPassage], PerTurn([], on_retrieval=True)]
    previous_context: list[ContextPassage]  # the last turn's context, for follow-ups
    previous_short_answer: str  # what the last turn answered ("what else?" asks for something other)
    reused_previous_context: Annotated[bool, PerTurn(False, on_retrieval=True)]
    # the generator said NOT_FOUND on this turn's earlier context: the next refinement keeps fewer strips
    narrow_context: Annotated[bool, PerTurn(False)]

    # IRCoT.
    reasoning: Annotated[list[str], PerTurn([])]
    reasoning_done: Annotated[bool, PerTurn(False)]

    # Generation and Self-RAG checks.
    answer_draft: Annotated[str, PerTurn("", on_retrieval=True)]
    # the generator replied that the passages do not hold the answer
    generator_refused: Annotated[bool, PerTurn(False, on_retrieval=True)]
    strict_generation: Annotated[bool, PerTurn(False, on_retrieval=True)]
    # a yes/no question's answer as read from the passages (a _yes_no.Verdict dict; {} when not decided)
    yes_no_verdict: Annotated[dict[str, Any], PerTurn({}, on_retrieval=True)]
    # the question with its bridge named, and the spans the model copied (_bridge.bridge_for; {} when off)
    bridge: Annotated[dict[str, Any], PerTurn({}, on_retrieval=True)]
    support: Annotated[list[dict[str, Any]], PerTurn([], on_retrieval=True)]  # SupportVerdict dicts
    proposed_short_answer: Annotated[str, PerTurn("", on_retrieval=True)]  # the judge's, before backing
    # the question's years / ordinals that no cited passage states near the short answer
    unmet_constraints: Annotated[list[str], PerTurn([], on_retrieval=True)]
    # what the question asks for something other than, given again as the answer ("besides X" → X)
    repeated_exclusions: Annotated[list[str], PerTurn([], on_retrieval=True)]
    answers_question: Annotated[bool | None, PerTurn(None, on_retrieval=True)]
    # the answer checks the draft failed, in the order routing.after_support reads them (FailedCheck dicts)
    failed_checks: Annotated[list[dict[str, Any]], PerTurn([], on_retrieval=True)]
    answer: Annotated[str, PerTurn("")]
    short_answer: Annotated[str, PerTurn("")]  # the fact asked for, backed by the kept sentences
    citations: Annotated[list[dict[str, Any]], PerTurn([])]  # Citation.model_dump()
    refused: Annotated[bool, PerTurn(False)]
    refusal_reason: Annotated[str | None, PerTurn(None)]

    # The question's budget (QuestionBudget dict, from the run config) and what stopped the turn early.
    budget: Annotated[dict[str, Any] | None, PerTurn(None)]
    turn_started_at: Annotated[float, PerTurn(0.0)]  # time.time() when start_turn ran
    budget_exhausted: Annotated[str | None, PerTurn(None)]  # e.g. "llm_calls: 20 of 20"

    # Loop counters (each with its own bound in settings.graph).
    ircot_steps: Annotated[int, PerTurn(0)]
    support_retries: Annotated[int, PerTurn(0)]
    usefulness_retries: Annotated[int, PerTurn(0)]
    crag_retries: Annotated[int, PerTurn(0)]

    # Accounting and tracing.
    llm_calls: Annotated[int, PerTurn(0), operator.add]
    llm_input_tokens: Annotated[int, PerTurn(0), operator.add]
    llm_output_tokens: Annotated[int, PerTurn(0), operator.add]
    steps: Annotated[list[StepEntry], PerTurn([]), operator.add]


def _per_turn_fields() -> dict[str, tuple[PerTurn, bool]]:
    """Each ``PerTurn`` field, with whether it has a reducer (it must then be reset with ``Overwrite``)."""
    fields = {}
    for name, hint in get_type_hints(RagState, include_extras=True).items():
        metadata: tuple[Any, ...] = getattr(hint, "__metadata__", ())
        marker = next((m for m in metadata if isinstance(m, PerTurn)), None)
        if marker is not None:
            fields[name] = (marker, callable(metadata[-1]))
    return fields


_PER_TURN = _per_turn_fields()


def turn_defaults(*, retrieval_only: bool = False) -> dict[str, Any]:
    """The update that starts a turn afresh (or, with ``retrieval_only``, a fresh retrieval in it)."""
    return {
        name: Overwrite(copy.deepcopy(marker.default)) if reduced else copy.deepcopy(marker.default)
        for name, (marker, reduced) in _PER_TURN.items()
        if marker.on_retrieval or not retrieval_only
    }
