"""On the iterative route, before refinement: the question's bridge named from the passages gathered
(``graph.name_bridges``; ``_bridge``). Refinement scores the strips against the named question too, and
the reader is shown it."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._bridge import bridge_for
from graphs.rag.nodes._passages import hits_from_state, passage_from_hit
from graphs.rag.nodes._step import records_step
from graphs.rag.nodes.ircot_reason import IRCOT_PASSAGE_CHARS, IRCOT_PASSAGES
from graphs.rag.resources import Resources
from graphs.rag.state import RagState


@records_step
def name_bridge(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    # the passages as IRCoT's steps show them: the local model has 4k tokens
    hits = hits_from_state(state.get("passages") or [])[:IRCOT_PASSAGES]
    per_passage = IRCOT_PASSAGE_CHARS // max(len(hits), 1)
    shown = [passage_from_hit(i, h, h.text[:per_passage]) for i, h in enumerate(hits, start=1)]
    bridge = bridge_for(state, shown, resources, config)
    return {"bridge": bridge, "decision": bridge or {"skipped": "a yes/no question, or no passages"}}
