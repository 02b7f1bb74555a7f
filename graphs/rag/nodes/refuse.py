"""Safe refusal: say plainly that the sources do not hold the answer, in the question's language."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._question_facts import writes_traditional
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.routing import no_sentence_survives
from graphs.rag.state import RagState
from prompts import load_prompt
from tools.chinese_script import to_traditional


def refusal_text(language: str, traditional: bool = False) -> str:
    text = load_prompt(f"refusal_{'zh' if language == 'zh' else 'en'}").strip()
    return to_traditional(text) if traditional else text


def refusal_reason(state: RagState) -> str:
    """Why this turn refuses, from what the state shows was tried."""
    unsupported = no_sentence_survives(state)
    if state.get("budget_exhausted"):
        spent = f"the question's budget ran out ({state['budget_exhausted']})"
        if unsupported:
            return f"no sentence of the answer was supported by the sources, and {spent}"
        return f"{spent} before an answer was written"
    if state.get("crag_action") == "refuse" or (
        state.get("crag_grade") == "incorrect" and not state.get("hits")
    ):
        return (
            f"retrieval graded incorrect after {state.get('crag_retries', 0)} knowledge-base "
            "retries, and web search found nothing or is not configured"
        )
    if state.get("repeated_exclusions"):
        return f"the passages name nothing besides {', '.join(state['repeated_exclusions'])}, which the question excludes"
    if state.get("unmet_constraints"):
        asked = ", ".join(state["unmet_constraints"])
        return f"the passages state it for something else, not for {asked}"
    if unsupported:
        return "no sentence of the answer was supported by the sources"
    if state.get("generator_refused"):
        return f"the passages do not contain the answer (after {state.get('usefulness_retries', 0)} re-retrievals)"
    if not state.get("context"):
        return "no passage relevant to the question was found"
    return "the sources do not hold the answer"


@records_step
def refuse(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    reason = refusal_reason(state)
    traditional = writes_traditional(state, resources.options.graph.answer_in_users_script)
    text = refusal_text(state.get("language", "en"), traditional)
    return {
        "answer": text,
        "citations": [],
        "refused": True,
        "refusal_reason": reason,
        "messages": [AIMessage(text)],
        "route_request": None,
        "decision": {"reason": reason},
    }
