"""Start of every turn: validate the input, reset per-turn fields, keep the last turn's context."""

from __future__ import annotations

import time
from typing import Any, get_args

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from core.errors import ConfigError
from graphs.rag.nodes._question_facts import question_language, read_question
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.run_context import RunContext, run_context
from graphs.rag.state import RagState, RouteRequest, turn_defaults

MAX_QUESTION_CHARS = 4000


@records_step
def start_turn(
    state: RagState, config: RunnableConfig, *, resources: Resources, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Reset everything that belongs to one turn; ``previous_context`` keeps the last non-empty context,
    ``previous_short_answer`` the last turn's short answer."""
    question = (state.get("question") or "").strip()
    if not question:
        raise ConfigError("graph input 'question' must be a non-empty string")
    if len(question) > MAX_QUESTION_CHARS:
        raise ConfigError(
            f"graph input 'question' is {len(question)} characters; the limit is {MAX_QUESTION_CHARS}"
        )
    route_request = state.get("route_request") or "auto"
    if route_request not in get_args(RouteRequest):
        raise ConfigError(f"graph input 'route_request' must be one of {', '.join(get_args(RouteRequest))}")
    budget = run_context(runtime, config).question_budget(resources.options)
    previous_context = state.get("context") or state.get("previous_context") or []
    previous_short_answer = state.get("short_answer") or ""
    previous_script = (state.get("question_facts") or {}).get("chinese_script")
    history_messages = len(state.get("messages") or [])
    return {
        **turn_defaults(),
        "messages": [HumanMessage(question)],
        "question": question,
        "route_request": route_request,
        "standalone_question": question,
        "language": question_language(question),
        "question_facts": read_question(
            question, question, previous_short_answer, previous_script
        ).model_dump(),
        "previous_context": previous_context,
        "previous_short_answer": previous_short_answer,
        "budget": budget.model_dump(),
        "turn_started_at": time.time(),
        "decision": {
            "budget": budget.model_dump(exclude_none=True),
            "question": question,
            "route_request": route_request,
            "history_messages": history_messages,
            "previous_context_passages": len(previous_context),
        },
    }
