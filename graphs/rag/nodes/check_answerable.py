"""The answer gate: before an answer is written, do the passages state it at all?

The local model is asked one yes/no question (``prompts/passages_state_answer.md``: the fact asked for,
for exactly what the question names, not the same topic for another year or entity), and P(yes) is
read from its one output token. Below ``graph.answer_gate``'s cut-off for the question's language the
turn goes as if the generator had said NOT_FOUND: one more retrieval within its bound, then a refusal.

On a labelled set this judgement rejected far more same-topic passages than the same question
answered as JSON or the generator's own NOT_FOUND, at the same share of answerable ones kept
(``bench/answerable_gate.py``). Hosted models skip it, and so does IRCoT: the cut-offs are calibrated
for the local model on single-hop questions (a multi-hop question's passages state its answer only
jointly). It is its own step so that the question's budget is checked between it and the answer.

Off by default (``graph.answer_gate: None``): on the pipeline's own, longer contexts RGB's negatives
scored above the cut-off, so it changed no refusals end to end (docs/benchmarks.md, Session 8).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._llm import probability_yes
from graphs.rag.nodes._passages import format_passages
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt


def answerable_prompt(state: RagState) -> tuple[str, str]:
    """(system, user) of the yes/no question: do the passages state the answer to the question?"""
    user = (
        f"{format_passages(state.get('context') or [])}\n\nQuestion: {state['standalone_question']}\n\n"
        "Do the passages state the answer to this question? Reply yes or no."
    )
    return load_prompt("passages_state_answer"), user


def skipped_because(state: RagState, resources: Resources) -> str | None:
    if resources.options.graph.answer_gate is None:
        return "graph.answer_gate is off"
    if state.get("route") == "iterative":
        return "not calibrated for multi-hop questions"
    if not resources.llm_is_local:
        return "not calibrated for a hosted model"
    return None


@records_step
def check_answerable(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    reason = skipped_because(state, resources)
    gate = resources.options.graph.answer_gate
    if reason is not None or gate is None:
        return {"decision": {"skipped": reason}}
    cutoff = gate.cutoff(state.get("language", "en"))
    p_yes = probability_yes(resources.llm, *answerable_prompt(state), config)
    passed = p_yes is None or p_yes >= cutoff
    decision: dict[str, Any] = {
        "p_yes": None if p_yes is None else round(p_yes, 3),
        "cutoff": cutoff,
        "passed": passed,
    }
    if p_yes is None:
        decision["note"] = "neither yes nor no among the likely first tokens: answered"
    return {"generator_refused": not passed, "decision": decision}
