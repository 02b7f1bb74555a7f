"""The single route found no answer: one more try as IRCoT, from the question (``graph.escalate_to_iterative``).

Adaptive-RAG's router decides before any passage is read, and a question it calls single-hop may need
two: "Where was the designer of the harbour bridge born?" reads like a lookup, and the passage that
names the designer does not say where she was born. Where the single route would refuse, the question
is asked again on the iterative route, once (``escalated_to_iterative``), with a fresh retrieval; the
counters of the other loops keep what the single route spent, so the retry adds no new loop, and the
draft keeps the single route's checks (``answer_checks.on_a_chain``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._step import records_step
from graphs.rag.nodes.refuse import refusal_reason
from graphs.rag.resources import Resources
from graphs.rag.state import RagState, turn_defaults


@records_step
def escalate_to_iterative(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    question = state["standalone_question"]
    return {
        **turn_defaults(retrieval_only=True),
        "route": "iterative",
        "escalated_to_iterative": True,
        "queries": [question],
        "reasoning": [],
        "reasoning_done": False,
        "crag_grade": None,  # the single route's grade, not this retrieval's
        "crag_action": None,
        "decision": {
            "route": "iterative",
            "reason": f"the single route would refuse: {refusal_reason(state)}",
            "queries": [question],
        },
    }
