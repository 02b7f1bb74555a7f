"""The question's budget is spent: record what was spent against which limit, and stop the turn there
(``after_budget_stop`` sends a draft to ``finalize_answer`` as a partial answer, else to ``refuse``)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.routing import after_budget_stop, budget_exhausted_by, budget_spent
from graphs.rag.state import RagState


@records_step
def stop_on_budget(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    reason = budget_exhausted_by(state) or "budget reached"
    spent = budget_spent(state)
    spent["seconds"] = round(spent["seconds"], 2)
    return {
        "budget_exhausted": reason,
        "decision": {
            "reason": reason,
            "spent": spent,
            "budget": state.get("budget") or {},
            "then": after_budget_stop(state),
        },
    }
