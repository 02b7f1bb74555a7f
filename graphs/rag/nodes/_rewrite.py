"""The rewritten query of the re-retrieval loops (``crag_retry``, ``usefulness_retry``).

Each of those nodes increments its own counter; the routing functions compare it with its bound.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._llm import ask_text, one_line
from graphs.rag.nodes._passages import answer_language
from graphs.rag.nodes._question_facts import in_users_script
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt


def rewritten_query(state: RagState, config: RunnableConfig, resources: Resources, why: str) -> str:
    """One LLM call: a search query for the question that avoids the queries already tried."""
    question = state["standalone_question"]
    tried = state.get("queries_issued") or []
    match_script = resources.options.graph.answer_in_users_script
    user = (
        f"Question: {question}\nLanguage: {answer_language(state, match_script)}\n"
        f"Why a new query is needed: {why}\nQueries already tried: {'; '.join(tried) or '(none)'}"
    )
    query = one_line(ask_text(resources.llm, load_prompt("rewrite_query"), user, config)) or question
    return in_users_script(query, state, match_script)
