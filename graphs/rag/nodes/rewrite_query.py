"""Re-retrieval loops: a rewritten query after a failed CRAG grade or an answer judged not useful.

Each node increments its own counter; the routing functions compare it with its bound in settings.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite

from graphs.rag.nodes._llm import ask_text, one_line
from graphs.rag.nodes._passages import language_name
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt


def rewritten_query(state: RagState, config: RunnableConfig, resources: Resources, why: str) -> str:
    """One LLM call: a search query for the question that avoids the queries already tried."""
    question = state["standalone_question"]
    tried = state.get("queries_issued") or []
    user = (
        f"Question: {question}\nLanguage: {language_name(state.get('language', 'en'))}\n"
        f"Why a new query is needed: {why}\nQueries already tried: {'; '.join(tried) or '(none)'}"
    )
    return one_line(ask_text(resources.llm, load_prompt("rewrite_query"), user, config)) or question


@records_step("crag_retry")
def crag_retry(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """Retrieval was graded incorrect and there is no web search: try the knowledge base once more."""
    counter = state.get("crag_retries", 0) + 1
    query = rewritten_query(state, config, resources, "the search found no relevant passage")
    return {
        "crag_retries": counter,
        "queries": [query],
        "hits": Overwrite([]),
        "decision": {
            "retry": "crag",
            "counter": counter,
            "bound": resources.settings.graph.max_crag_retries,
            "query": query,
        },
    }


@records_step("usefulness_retry")
def usefulness_retry(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """The answer did not address the question (IsUse), or the passages held no answer: search again."""
    counter = state.get("usefulness_retries", 0) + 1
    why = (
        "the passages found did not contain the answer"
        if state.get("generator_refused")
        else "the answer written from the passages found did not address the question"
    )
    query = rewritten_query(state, config, resources, why)
    return {
        "usefulness_retries": counter,
        "queries": [query],
        "hits": Overwrite([]),
        "passages": [],
        "context": [],
        "strips": [],
        "answer_draft": "",
        "generator_refused": False,
        "strict_generation": False,
        "support": [],
        "answers_question": None,
        "reused_previous_context": False,
        "decision": {
            "retry": "usefulness",
            "reason": why,
            "counter": counter,
            "bound": resources.settings.graph.max_usefulness_retries,
            "query": query,
        },
    }
