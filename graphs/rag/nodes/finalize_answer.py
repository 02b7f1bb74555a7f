"""The answer as delivered: unsupported sentences removed (after the retry bound), the short answer kept
when what remains backs it, padding trimmed to the sentences that state it, citations resolved."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from core.answer import Citation, SupportVerdict
from graphs.rag.nodes._citations import answer_sentences, cited_numbers, join_sentences
from graphs.rag.nodes._question_facts import in_users_script
from graphs.rag.nodes._short_answer import answers_another_question, backed_short_answer, sentences_stating
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import ContextPassage, RagState
from tools.knowledge_base.sparse import tokenize


def citations_for(answer: str, context: list[ContextPassage]) -> list[dict[str, Any]]:
    """One ``Citation`` per passage number cited in ``answer``, in order of first citation."""
    by_number = {p["n"]: p for p in context}
    citations = []
    for n in cited_numbers(answer):
        passage = by_number.get(n)
        if passage is not None:
            citations.append(
                Citation(
                    n=n,
                    chunk_id=passage["chunk_id"],
                    doc_id=passage["doc_id"],
                    source=passage["source"],
                    title=passage["title"],
                    page=passage["page"],
                    url=passage["url"],
                    origin=passage["origin"],
                ).model_dump()
            )
    return citations


@records_step
def finalize_answer(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    draft = state.get("answer_draft") or ""
    if state.get("route") == "direct":
        return {
            "answer": draft,
            "citations": [],
            "support": [],  # a retrieval tried first (direct_fallback) judged another draft
            "messages": [AIMessage(draft)],
            "route_request": None,
            "decision": {"sentences_removed": 0, "citations": 0},
        }
    support = [dict(v) for v in state.get("support") or []]
    if not support and state.get("budget_exhausted"):  # stopped before the check: say so per sentence
        support = [
            SupportVerdict(sentence=s.text, citations=s.citations, verdict="unchecked").model_dump()
            for s in answer_sentences(draft)
        ]
    if support:
        for verdict in support:
            verdict["removed"] = verdict["verdict"] == "not"
        kept = [v["sentence"] for v in support if not v["removed"]]
    else:
        kept = [s.text for s in answer_sentences(draft)]
    context = list(state.get("context") or [])
    cited = set(cited_numbers(join_sentences(kept)))
    evidence = kept + [p["text"] for p in context if p["n"] in cited] if kept else []
    # The judge may write the short answer in Simplified for a Traditional question and passage.
    proposed = in_users_script(
        state.get("proposed_short_answer") or "", state, resources.options.graph.answer_in_users_script
    )
    short_answer = backed_short_answer(proposed, evidence, tokenize)
    if answers_another_question(short_answer, state.get("standalone_question") or "", tokenize):
        short_answer = ""
    needed = sentences_stating(short_answer, kept, tokenize)
    for verdict in support:
        verdict["trimmed"] = not verdict["removed"] and verdict["sentence"] not in needed
    answer = join_sentences(needed)
    citations = citations_for(answer, context)
    flagged = [v["sentence"][:160] for v in support if v["verdict"] in ("partially", "unchecked")]
    return {
        "answer": answer,
        "short_answer": short_answer,
        "citations": citations,
        "budget_exhausted": state.get("budget_exhausted"),
        "support": support,
        "messages": [AIMessage(answer)],
        "route_request": None,
        "decision": {
            "short_answer": short_answer,
            "short_answer_dropped": bool(proposed) and not short_answer,
            "sentences_removed": sum(1 for v in support if v["removed"]),
            "sentences_trimmed": sum(1 for v in support if v["trimmed"]),
            "sentences_flagged": flagged,
            "citations": [c["n"] for c in citations],
        },
    }
