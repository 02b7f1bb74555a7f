"""The cited answer from the numbered context; ``answer_prompt`` and ``draft_update`` serve its regeneration too.

With ``graph.answer_gate`` set, the local model is first asked whether the passages state the answer
at all (``prompts/passages_state_answer.md``; P(yes) read from its one output token). Below the cut-off
it counts as the generator's own NOT_FOUND: one more retrieval, then a refusal. Hosted models skip it
(the cut-offs are calibrated for the local one, ``bench/answerable_gate.py``), and so does IRCoT (the
calibration questions are single-hop).
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._citations import (
    answer_sentences,
    attribute_uncited,
    cited_numbers,
    normalise_citations,
)
from graphs.rag.nodes._llm import ask_text, probability_yes
from graphs.rag.nodes._passages import format_passages, language_name
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt
from tools.knowledge_base.sparse import tokenize

NOT_FOUND = "NOT_FOUND"
_NOT_FOUND_RE = re.compile(r"\bNOT[_ ]FOUND\b\.?", re.IGNORECASE)


def answer_prompt(state: RagState, *, strict: bool) -> tuple[str, str]:
    """(system, user) messages for the generator: passages delimited as data, then the question."""
    system = load_prompt("generate_answer")
    # The question comes before the passages as well as after: a small model reads them for it.
    user = (
        f"Question: {state['standalone_question']}\n\n"
        f"{format_passages(state.get('context') or [])}\n\n"
        f"Question: {state['standalone_question']}\n"
        f"Answer language: {language_name(state.get('language', 'en'))}"
    )
    if strict:
        system = f"{system}\n\n{load_prompt('generate_answer_strict')}"
        unsupported = [v["sentence"] for v in state.get("support") or [] if v["verdict"] == "not"]
        if unsupported:
            user += "\n\nUnsupported sentences of the previous answer (do not repeat them):\n"
            user += "\n".join(f"- {s}" for s in unsupported)
    return system, user


def draft_update(reply: str, state: RagState, extra_decision: dict[str, Any]) -> dict[str, Any]:
    context = state.get("context") or []
    valid = {p["n"] for p in context}
    refused = not reply.strip() or reply.strip().upper().startswith(NOT_FOUND)
    draft = "" if refused else normalise_citations(_NOT_FOUND_RE.sub("", reply).strip(), valid)
    draft, attributed = attribute_uncited(draft, {p["n"]: p["text"] for p in context}, tokenize)
    sentences = answer_sentences(draft)
    decision = {
        "context_passages": len(valid),
        "says_not_found": refused,
        "sentences": len(sentences),
        "uncited_sentences": sum(1 for s in sentences if not s.citations),
        "citations": cited_numbers(draft),
        "citations_attributed": attributed,
        **extra_decision,
    }
    return {"answer_draft": draft, "generator_refused": refused, "decision": decision}


def answerable_prompt(state: RagState) -> tuple[str, str]:
    """(system, user) of the yes/no question: do the passages state the answer to the question?"""
    user = (
        f"{format_passages(state.get('context') or [])}\n\nQuestion: {state['standalone_question']}\n\n"
        "Do the passages state the answer to this question? Reply yes or no."
    )
    return load_prompt("passages_state_answer"), user


def answer_gate(state: RagState, resources: Resources, config: RunnableConfig) -> dict[str, Any] | None:
    """The passages-state-the-answer check, or None when it does not apply (off, or a hosted model)."""
    gate = resources.settings.graph.answer_gate
    # Calibrated on single-hop questions: the passages of a multi-hop one state its answer only jointly.
    if gate is None or not resources.llm_is_local or state.get("route") == "iterative":
        return None
    cutoff = gate.cutoff(state.get("language", "en"))
    p_yes = probability_yes(resources.llm, *answerable_prompt(state), config)
    return {
        "p_yes": None if p_yes is None else round(p_yes, 3),
        "cutoff": cutoff,
        "passed": p_yes is None or p_yes >= cutoff,
    }


@records_step
def generate_answer(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    gate = answer_gate(state, resources, config)
    system, user = answer_prompt(state, strict=False)
    decision: dict[str, Any] = {"reused_previous_context": bool(state.get("reused_previous_context"))}
    if gate is not None:
        decision["answer_gate"] = gate
    reply = ask_text(resources.llm, system, user, config) if gate is None or gate["passed"] else NOT_FOUND
    update = draft_update(reply, state, decision)
    update["strict_generation"] = False
    return update
