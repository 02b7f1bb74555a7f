"""The cited answer from the numbered context; ``answer_prompt`` and ``draft_update`` serve its regeneration too."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._bridge import bridge_for, bridge_instruction
from graphs.rag.nodes._citations import (
    answer_sentences,
    attribute_uncited,
    cited_numbers,
    normalise_citations,
    repoint_citations,
    word_share,
    word_share_across_languages,
)
from graphs.rag.nodes._llm import ask_text, ask_text_masking_unlikely
from graphs.rag.nodes._passages import answer_language, format_passages
from graphs.rag.nodes._question_facts import facts_of, in_users_script
from graphs.rag.nodes._step import records_step
from graphs.rag.nodes._yes_no import Verdict, verdict_for, verdict_instruction
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt
from tools.knowledge_base.sparse import tokenize
from tools.pinyin_names import with_passage_spellings

NOT_FOUND = "NOT_FOUND"
# A bound no first token falls under: P(NOT_FOUND) is reported and greedy decoding still decides.
RECORD_ONLY = 1e-9
_NOT_FOUND_RE = re.compile(r"\bNOT[_ ]FOUND\b\.?", re.IGNORECASE)


def reasoning_notes(state: RagState, shown: bool) -> str:
    """IRCoT's reasoning sentences as notes after the passages (``graph.reader_sees_reasoning``), or ''.
    A sentence that asks (the model sometimes restates the question as its step) finds nothing and is
    left out: the reader copied one into its answer."""
    reasoning = [
        r for r in state.get("reasoning") or [] if r.strip() and not r.rstrip().endswith(("?", "？"))
    ]
    if not shown or state.get("route") != "iterative" or not reasoning:
        return ""
    notes = "\n".join(f"- {r}" for r in reasoning)
    return f"{load_prompt('reasoning_notes').strip()}\n{notes}\n\n"


def answer_prompt(
    state: RagState,
    *,
    strict: bool,
    match_script: bool = True,
    reasoning: bool = False,
    yes_no_verdict: Verdict | None = None,
    bridge: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """(system, user) messages for the generator: passages delimited as data, then the question (and a
    yes/no question's verdict, read from the passages, for the reader to show, or the question with its
    bridge named)."""
    system = load_prompt("generate_answer")
    # A name the passages write in the other script is shown in their spelling beside the question's
    # ("Who wrote Yuxiang (雨巷)?"): the 1.5B reader does not match pinyin with characters itself.
    question = with_passage_spellings(
        state["standalone_question"], state.get("passage_spellings") or {}, beside=True
    )
    # The question comes before the passages as well as after: a small model reads them for it.
    user = f"Question: {question}\n\n{format_passages(state.get('context') or [])}\n\n"
    user += reasoning_notes(state, reasoning)
    user += f"Question: {question}\nAnswer language: {answer_language(state, match_script)}"
    for instruction in (
        verdict_instruction(yes_no_verdict, facts_of(state).language),
        bridge_instruction(bridge or {}),
    ):
        if instruction:
            user += f"\n\n{instruction}"
    if strict:
        system = f"{system}\n\n{load_prompt('generate_answer_strict')}"
        unsupported = [v["sentence"] for v in state.get("support") or [] if v["verdict"] == "not"]
        if unsupported:
            user += "\n\nUnsupported sentences of the previous answer (do not repeat them):\n"
            user += "\n".join(f"- {s}" for s in unsupported)
        repeated = state.get("repeated_exclusions") or []
        if repeated:
            user += (
                f"\n\nThe question asks for something other than {', '.join(repeated)}; the previous answer "
                "gave only that. Answer with the other one(s) the passages state, or NOT_FOUND."
            )
    return system, user


def ask_for_answer(
    resources: Resources, system: str, user: str, config: RunnableConfig
) -> tuple[str, dict[str, Any]]:
    """The generator's reply, and what decided a NOT_FOUND for the trace. With
    ``graph.not_found_min_probability`` (local model) NOT_FOUND stands only when its first token is that
    likely: the refusal is one token, while an answer spreads its probability over many first tokens,
    so greedy decoding refuses although the model gives answering more probability in all."""
    below = resources.options.graph.not_found_min_probability
    if below is None and resources.support_verifier == "features":
        below = RECORD_ONLY  # the fitted verifier reads P(NOT_FOUND)
    if below is None or not resources.llm_is_local:
        return ask_text(resources.llm, system, user, config), {}
    reply, opening = ask_text_masking_unlikely(resources.llm, system, user, config, (NOT_FOUND,), below)
    if not opening:
        return reply, {}
    return reply, {
        "not_found_probability": opening.get("probability"),
        "not_found_masked": opening.get("masked"),
    }


def draft_update(
    reply: str,
    state: RagState,
    extra_decision: dict[str, Any],
    *,
    repoint: bool = False,
    bridges: bool = False,
    match_script: bool = True,
    across_languages: bool = True,
) -> dict[str, Any]:
    """The draft the checks read: citations normalised (and re-pointed with ``repoint``, to a bridging
    pair of passages with ``bridges``), and with
    ``match_script`` written in the user's Chinese script (the passages' too, as a rule). An uncited
    sentence is attributed by ``word_share_across_languages`` with ``across_languages``
    (``graph.share_across_languages``): an English answer to an English question from a Chinese passage
    shares its numbers with it, not its words."""
    reply = in_users_script(reply, state, match_script)
    context = state.get("context") or []
    valid = {p["n"] for p in context}
    texts = {p["n"]: p["text"] for p in context}
    refused = not reply.strip() or reply.strip().upper().startswith(NOT_FOUND)
    draft = "" if refused else normalise_citations(_NOT_FOUND_RE.sub("", reply).strip(), valid)
    share = word_share_across_languages if across_languages else word_share
    draft, attributed = attribute_uncited(draft, texts, tokenize, share)
    draft, repointed = repoint_citations(draft, texts, tokenize, bridges=bridges) if repoint else (draft, [])
    sentences = answer_sentences(draft)
    decision = {
        "context_passages": len(valid),
        "says_not_found": refused,
        "sentences": len(sentences),
        "uncited_sentences": sum(1 for s in sentences if not s.citations),
        "citations": cited_numbers(draft),
        "citations_attributed": attributed,
        **({"citations_repointed": repointed} if repoint else {}),
        **extra_decision,
    }
    return {"answer_draft": draft, "generator_refused": refused, "decision": decision}


@records_step
def generate_answer(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    match_script = resources.options.graph.answer_in_users_script
    verdict = verdict_for(state, resources, config)
    bridge = bridge_for(state, resources, config)
    system, user = answer_prompt(
        state,
        strict=False,
        match_script=match_script,
        reasoning=resources.options.graph.reader_sees_reasoning,
        yes_no_verdict=verdict,
        bridge=bridge,
    )
    reply, not_found = ask_for_answer(resources, system, user, config)
    update = draft_update(
        reply,
        state,
        {
            "reused_previous_context": bool(state.get("reused_previous_context")),
            **not_found,
            **verdict.decision(),
            **({"bridge": bridge} if bridge else {}),
        },
        repoint=resources.options.graph.repoint_citations,
        bridges=resources.options.graph.cite_bridges,
        across_languages=resources.options.graph.share_across_languages,
        match_script=match_script,
    )
    update["strict_generation"] = False
    update["yes_no_verdict"] = verdict.model_dump() if verdict.answer else {}
    update["bridge"] = bridge
    return update
