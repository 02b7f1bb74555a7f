"""Query transforms before retrieval: none, multi-query, HyDE, step-back, decomposition.

``auto`` means no transform on the first pass: one good hybrid query plus a reranker is what the
single-shot budget (at most two LLM calls: answer and check) allows; rewrites happen on retries.
Every transform keeps the original question among the queries, so a bad rewrite cannot lose it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from graphs.rag.nodes._llm import ask_structured, ask_text, one_line
from graphs.rag.nodes._passages import answer_language
from graphs.rag.nodes._question_facts import in_users_script
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.run_context import RunContext, run_context
from graphs.rag.state import RagState
from prompts import load_prompt

MAX_GENERATED_QUERIES = 5
HYDE_MAX_CHARS = 1200


class QueryList(BaseModel):
    queries: list[str] = Field(description="search queries or sub-questions, one per item")


def _clean(queries: list[str], question: str, limit: int) -> list[str]:
    seen = {question.strip().lower()}
    kept: list[str] = []
    for q in queries:
        q = " ".join(q.split())
        if q and q.lower() not in seen:
            seen.add(q.lower())
            kept.append(q)
    return kept[:limit]


@records_step
def transform_query(
    state: RagState, config: RunnableConfig, *, resources: Resources, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Set ``queries`` for the first retrieval according to the configured transform."""
    question = state["standalone_question"]
    transform = run_context(runtime, config).transform(resources.options)
    if transform == "auto":
        transform = "none"
    match_script = resources.options.graph.answer_in_users_script
    user = f"Question: {question}\nLanguage: {answer_language(state, match_script)}"
    extra: list[str] = []
    error = None
    if transform in ("multi_query", "decompose"):
        count = resources.options.graph.multi_queries
        prompt = (
            load_prompt("multi_query").format(count=count)
            if transform == "multi_query"
            else load_prompt("decompose_question")
        )
        parsed, error = ask_structured(resources.llm, QueryList, prompt, user, config)
        if parsed is not None:
            extra = _clean(parsed.queries, question, min(count, MAX_GENERATED_QUERIES))
    elif transform == "hyde":
        passage = ask_text(resources.llm, load_prompt("hyde"), user, config)
        extra = _clean([passage[:HYDE_MAX_CHARS]], question, 1)
    elif transform == "step_back":
        extra = _clean(
            [one_line(ask_text(resources.llm, load_prompt("step_back"), user, config))], question, 1
        )
    queries = [question, *(in_users_script(q, state, match_script) for q in extra)]
    decision: dict[str, Any] = {"transform": transform, "queries": queries}
    if error:
        decision["error"] = error
        decision["fallback"] = "the original question only"
    return {"query_transform": transform, "queries": queries, "decision": decision}
