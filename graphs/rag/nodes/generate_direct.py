"""The direct route: an answer without retrieval."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._llm import ask_text
from graphs.rag.nodes._passages import answer_language
from graphs.rag.nodes._question_facts import in_users_script
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt


@records_step
def generate_direct(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """Answer without retrieval (greetings, arithmetic, general knowledge not asked to be sourced); also
    the fallback of a 'direct' question that retrieved first and found its sources do not hold it."""
    match_script = resources.options.graph.answer_in_users_script
    user = f"Message: {state['standalone_question']}\nAnswer language: {answer_language(state, match_script)}"
    reply = ask_text(resources.llm, load_prompt("generate_direct"), user, config)
    reply = in_users_script(reply, state, match_script)
    update: dict[str, Any] = {"answer_draft": reply, "decision": {"chars": len(reply)}}
    if state.get("direct_fallback"):
        # The answer is the direct route's: no citations, and the passages the pass found are not what
        # the conversation was answered from (a follow-up is not sent to them).
        update.update(route="direct", context=[])
        update["decision"]["fallback"] = (
            "the documents do not hold the answer: answered from the model's memory"
        )
    return update
