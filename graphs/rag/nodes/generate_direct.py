"""The direct route: an answer without retrieval."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._llm import ask_text
from graphs.rag.nodes._passages import language_name
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt


@records_step
def generate_direct(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """Answer without retrieval (greetings, arithmetic, general knowledge not asked to be sourced)."""
    user = (
        f"Message: {state['standalone_question']}\n"
        f"Answer language: {language_name(state.get('language', 'en'))}"
    )
    reply = ask_text(resources.llm, load_prompt("generate_direct"), user, config)
    return {"answer_draft": reply, "decision": {"chars": len(reply)}}
