"""Hybrid search + rerank for the current queries; hits accumulate de-duplicated (IRCoT)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from core.errors import ProviderUnavailable
from graphs.rag.nodes._passages import hits_to_state
from graphs.rag.nodes._rewrite import question_translations
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.run_context import RunContext, run_context
from graphs.rag.state import RagState
from tools.knowledge_base.records import Hit
from tools.knowledge_base.text_units import detect_language
from tools.pinyin_names import names_in_passage_script, with_passage_spellings
from tools.rerank.base import rerank_for_queries
from tools.search import require_groups


def describe_hit(hit: Hit) -> dict[str, Any]:
    """A hit in plain terms for the trace: where it ranked in each leg, and its scores."""
    return {
        "chunk_id": hit.chunk_id,
        "title": hit.title,
        "source": hit.url or hit.source,
        "fused_score": round(hit.score, 4) if hit.rerank_score is None else None,
        "rerank_score": round(hit.rerank_score, 4) if hit.rerank_score is not None else None,
        "legs": {leg: {"rank": s.rank, "score": round(s.score, 4)} for leg, s in hit.legs.items()},
    }


def search_and_rerank(
    resources: Resources,
    queries: list[str],
    rerank_queries: list[str],
    groups: list[str],
    top_n: int,
    spell_names_in: tuple[str, str] | None = None,
) -> tuple[list[Hit], dict[str, Any]]:
    """Search ``queries`` (fused), rerank the candidates against ``rerank_queries`` (each passage keeps
    its best score), keep ``top_n``. The facts name the languages the candidates are written in, and
    with ``spell_names_in`` (the question and its language) the names of the question that candidates
    in another language write in their own script (``tools.pinyin_names``).

    A hosted reranker that fails degrades to the fusion order instead of failing the run."""
    candidates = resources.search(queries, groups, max(resources.options.rerank_candidates, top_n))
    written = [(h.text, detect_language(h.text)) for h in candidates if h.origin == "kb"]  # once each
    facts: dict[str, Any] = {
        "candidates": len(candidates),
        "languages": sorted({language for _, language in written} & {"en", "zh"}),
    }
    if spell_names_in is not None:
        question, language = spell_names_in
        others = [text for text, written_language in written if written_language != language]
        facts["names"] = names_in_passage_script(question, others) if others else {}
    try:
        reranker = resources.reranker
        hits = rerank_for_queries(reranker, rerank_queries, candidates, top_n)
        facts["reranker"] = reranker.name
    except ProviderUnavailable as exc:
        hits = candidates[:top_n]
        facts["reranker"] = f"unavailable ({exc}); fusion order kept"
    return hits, facts


@records_step
def retrieve(
    state: RagState, config: RunnableConfig, *, resources: Resources, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Run the state's ``queries``; on the iterative route each step keeps fewer hits (they accumulate)."""
    groups = run_context(runtime, config).groups(resources.options)
    question = state["standalone_question"]
    queries = state.get("queries") or [question]
    top_k = resources.options.search_top_k
    iterative = state.get("route") == "iterative"
    top_n = max(2, top_k // 2) if iterative else top_k
    # IRCoT's step queries are reasoning sentences: rerank against them, they say what is missing.
    # A query in another language than the question is its translation (a retry's): passages in that
    # language are judged against it.
    rerank_queries = [queries[0]] if iterative else [question, *question_translations(state)]
    spell = resources.options.graph.retry_across_languages and resources.options.graph.names_across_scripts
    spell_names_in = (question, state.get("language", "en")) if spell and not iterative else None
    hits, facts = search_and_rerank(resources, queries, rerank_queries, groups, top_n, spell_names_in)
    respelled = with_passage_spellings(question, facts.get("names") or {})
    if respelled not in (question, *queries):
        # candidates write a name of the question in their own script: search and judge that spelling too
        queries, rerank_queries = [*queries, respelled], [*rerank_queries, respelled]
        hits, facts = search_and_rerank(resources, queries, rerank_queries, groups, top_n, spell_names_in)
    return {
        "hits": hits_to_state(hits),
        "queries_issued": queries,
        "passage_languages": facts["languages"],
        "passage_spellings": facts.get("names") or {},
        "decision": {
            "queries": queries,
            "groups": require_groups(groups),  # whose documents were searched (the caller's + public)
            **facts,
            "hits": [describe_hit(h) for h in hits],
        },
    }
