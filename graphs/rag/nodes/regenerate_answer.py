"""IsSup failed: the answer written again from the same context, with stricter instructions."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._step import records_step
from graphs.rag.nodes._yes_no import Verdict
from graphs.rag.nodes.generate_answer import answer_prompt, ask_for_answer, draft_update
from graphs.rag.resources import Resources
from graphs.rag.state import RagState


@records_step
def regenerate_answer(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """IsSup failed: write the answer again with stricter instructions (counts toward the bound)."""
    counter = state.get("support_retries", 0) + 1
    match_script = resources.options.graph.answer_in_users_script
    system, user = answer_prompt(
        state,
        strict=True,
        match_script=match_script,
        reasoning=resources.options.graph.reader_sees_reasoning,
        yes_no_verdict=Verdict.model_validate(state.get("yes_no_verdict") or {}),
        bridge=state.get("bridge") or {},
    )
    reply, not_found = ask_for_answer(resources, system, user, config)
    bound = resources.options.graph.max_support_retries
    update = draft_update(
        reply,
        state,
        {"retry": "support", "counter": counter, "bound": bound, **not_found},
        repoint=resources.options.graph.repoint_citations,
        bridges=resources.options.graph.cite_bridges,
        across_languages=resources.options.graph.share_across_languages,
        match_script=match_script,
    )
    update.update(support_retries=counter, strict_generation=True)
    return update
