"""The agent graph's state: one TypedDict, reducers where lists accumulate, a counter for every loop.

Values are plain JSON-able data (hits and passages are ``model_dump(mode="json")`` dicts) so a thread's
checkpoint can be stored by any LangGraph checkpointer and read back without custom types.

Per-turn fields are reset by ``start_turn`` at the start of every question (``Overwrite`` bypasses
the reducers); ``messages`` and ``previous_context`` carry over between the turns of a thread.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, Required

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict  # pydantic needs this one before 3.12 (graph JSON schemas)

Route = Literal["direct", "single", "iterative"]
RouteRequest = Literal["auto", "direct", "single", "iterative"]
CragGrade = Literal["correct", "ambiguous", "incorrect"]
CragAction = Literal["refine", "web_search", "refine_and_web", "retry_kb", "refuse"]


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


class RagOutput(TypedDict, total=False):
    """What a caller reads back (``Agent`` turns it into an ``Answer``)."""

    question: str
    standalone_question: str
    answer: str
    citations: list[dict[str, Any]]
    refused: bool
    refusal_reason: str | None
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


class RagState(TypedDict, total=False):
    """The whole graph state. Loop counters are bounded by ``settings.graph.*`` (see routing.py)."""

    # The conversation (kept across turns) and this turn's question.
    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    route_request: RouteRequest | None  # a caller-forced route; consumed (set to None) at turn end
    standalone_question: str
    language: Literal["en", "zh"]

    # Routing.
    route: Route | None
    route_confidence: float | None
    route_reason: str

    # Retrieval.
    query_transform: str
    queries: list[str]  # the queries of the latest retrieval
    queries_issued: Annotated[list[str], operator.add]  # every query this turn
    hits: Annotated[list[dict[str, Any]], merge_hits]  # Hit.model_dump(mode="json")
    crag_grade: CragGrade | None
    crag_action: CragAction | None
    web_searched: bool  # web search already ran this turn (CRAG does not ask for it twice)
    passages: list[dict[str, Any]]  # expanded hits before refinement (Hit dicts)
    strips: list[dict[str, Any]]  # kept strips: chunk_id, text, score
    context: list[ContextPassage]
    previous_context: list[ContextPassage]  # the last turn's context, for follow-ups
    reused_previous_context: bool

    # IRCoT.
    reasoning: list[str]
    reasoning_done: bool

    # Generation and Self-RAG checks.
    answer_draft: str
    generator_refused: bool  # the generator replied that the passages do not hold the answer
    strict_generation: bool
    support: list[dict[str, Any]]  # SupportVerdict.model_dump()
    answers_question: bool | None
    answer: str
    citations: list[dict[str, Any]]  # Citation.model_dump()
    refused: bool
    refusal_reason: str | None

    # Loop counters (each with its own bound in settings.graph).
    ircot_steps: int
    support_retries: int
    usefulness_retries: int
    crag_retries: int

    # Accounting and tracing.
    llm_calls: Annotated[int, operator.add]
    llm_input_tokens: Annotated[int, operator.add]
    llm_output_tokens: Annotated[int, operator.add]
    steps: Annotated[list[StepEntry], operator.add]
