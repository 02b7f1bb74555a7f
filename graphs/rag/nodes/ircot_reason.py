"""IRCoT: interleave one reasoning sentence with one retrieval, until the answer is stated or the bound.

The model sees the question, the passages gathered so far and its reasoning so far, and writes the next
sentence; that sentence becomes the next search query. ``ircot_steps`` counts reasoning calls and is
bounded by ``graph.max_ircot_steps``; a sentence that repeats an earlier one also ends the loop.

The loop ends when the sentence states the answer ("So the answer is: ..."), IRCoT's own rule, not
when the model merely sets ``answer_found``: the small local model claims it after the first hop of a
bridge question, answering from the wrong entity. ``graph.ircot_trusts_answer_found`` switches that
rule off (it also stops a comparison whose first sentence already settles it, "... so they are of the
same nationality", from wandering on).

With ``graph.ircot_structured_steps`` a step returns two fields instead of one sentence: a new
``fact`` (kept as reasoning) and the ``next_search`` for the one fact still missing (the next query);
the step is told not to answer (the reader does). The free sentence was both the note and the query,
and the 1.5B model wrote it as a restatement of the question — 24 of 26 chains on the mixed report
split ended by repeating it. A chain ends when no search is asked for, when the search asked for was
made already, or at the bound. (A third field for the answer was tried first: the model filled it at
the first step of every chain, ending each after one hop.)
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from graphs.rag.nodes._llm import ask_structured
from graphs.rag.nodes._passages import format_passages, hits_from_state, language_name, passage_from_hit
from graphs.rag.nodes._reasoning_answer import STATES_ANSWER
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt

IRCOT_PASSAGES = 8
IRCOT_PASSAGE_CHARS = 2400  # shared by the passages shown at one step (the local model has 4k tokens)
THOUGHT_MAX_CHARS = 400


class ChainStep(BaseModel):
    fact: str = Field("", description="one new fact the passages state, naming who or what it is about")
    next_search: str = Field("", description="a short search for the one missing fact, naming its entity")


class ReasoningStep(BaseModel):
    thought: str = Field(description="the next reasoning sentence")
    answer_found: bool = Field(description="true when the reasoning now states the answer")


def _reasoning_block(reasoning: list[str]) -> str:
    if not reasoning:
        return "(none yet)"
    return "\n".join(f"{i}. {thought}" for i, thought in enumerate(reasoning, start=1))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:THOUGHT_MAX_CHARS]


def _listed(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items) if items else "(none yet)"


def _structured_step(
    state: RagState, config: RunnableConfig, resources: Resources, passages: str, counter: int, bound: int
) -> dict[str, Any]:
    """One step as two fields (``graph.ircot_structured_steps``)."""
    reasoning = list(state.get("reasoning") or [])
    searches = list(dict.fromkeys(state.get("queries_issued") or [state["standalone_question"]]))
    user = (
        f"{passages}\n\nQuestion: {state['standalone_question']}\n"
        f"Language: {language_name(state.get('language', 'en'))}\n"
        f"Facts noted so far:\n{_listed(reasoning)}\n"
        f"Searches made so far:\n{_listed(searches)}\n\nYour JSON:"
    )
    step, error = ask_structured(resources.llm, ChainStep, load_prompt("ircot_search_step"), user, config)
    decision: dict[str, Any] = {"counter": counter, "bound": bound}
    if step is None:
        decision.update(error=error, stop="reasoning output unusable: answer from what was gathered")
        return {"ircot_steps": counter, "reasoning_done": True, "decision": decision}
    fact, search = _one_line(step.fact), _one_line(step.next_search)
    known = {r.casefold() for r in reasoning}
    noted = reasoning + ([fact] if fact and fact.casefold() not in known else [])
    searched_before = search.casefold() in {s.casefold() for s in searches}
    done = not search or searched_before
    decision.update(fact=fact, next_search=search)
    if not search:
        decision["stop"] = "no further search asked for"
    elif searched_before:
        decision["stop"] = "the search asked for was made already"
    elif counter >= bound:
        decision["stop"] = f"step bound reached ({counter}/{bound})"
    update: dict[str, Any] = {
        "ircot_steps": counter,
        "reasoning": noted,
        "reasoning_done": done,
        "decision": decision,
    }
    if not done:
        update["queries"] = [search]
    return update


@records_step
def ircot_reason(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    counter = state.get("ircot_steps", 0) + 1
    bound = resources.options.graph.max_ircot_steps
    reasoning = list(state.get("reasoning") or [])
    hits = hits_from_state(state.get("hits") or [])[:IRCOT_PASSAGES]
    per_passage = IRCOT_PASSAGE_CHARS // max(len(hits), 1)
    shown = [passage_from_hit(i, h, h.text[:per_passage]) for i, h in enumerate(hits, start=1)]
    if resources.options.graph.ircot_structured_steps:
        update = _structured_step(state, config, resources, format_passages(shown), counter, bound)
        update["decision"]["passages_seen"] = len(hits)
        return update
    user = (
        f"{format_passages(shown)}\n\nQuestion: {state['standalone_question']}\n"
        f"Language: {language_name(state.get('language', 'en'))}\n"
        f"Reasoning so far:\n{_reasoning_block(reasoning)}\n\nNext reasoning sentence:"
    )
    step, error = ask_structured(resources.llm, ReasoningStep, load_prompt("ircot_reason"), user, config)
    decision: dict[str, Any] = {"counter": counter, "bound": bound, "passages_seen": len(hits)}
    if step is None:
        decision.update(error=error, stop="reasoning output unusable: answer from what was gathered")
        return {"ircot_steps": counter, "reasoning_done": True, "decision": decision}
    thought = _one_line(step.thought)
    repeated = thought.lower() in {r.lower() for r in reasoning}
    states_answer = bool(STATES_ANSWER.search(thought))
    trusted = step.answer_found and resources.options.graph.ircot_trusts_answer_found
    done = states_answer or trusted or not thought or repeated
    decision.update(thought=thought, answer_found=step.answer_found, states_answer=states_answer)
    if step.answer_found and not states_answer and not trusted:
        decision["note"] = "answer_found claimed without stating the answer: one more step"
    if repeated:
        decision["stop"] = "the reasoning repeated itself"
    elif done:
        decision["stop"] = (
            "the reasoning states the answer" if states_answer else "the model found the answer"
        )
    elif counter >= bound:
        decision["stop"] = f"step bound reached ({counter}/{bound})"
    update: dict[str, Any] = {
        "ircot_steps": counter,
        "reasoning": reasoning + ([thought] if thought and not repeated else []),
        "reasoning_done": done,
        "decision": decision,
    }
    if not done:
        update["queries"] = [thought]  # the next retrieval searches for what the reasoning needs
    return update
