"""IRCoT: interleave one reasoning sentence with one retrieval, until the answer is stated or the bound.

The model sees the question, the passages gathered so far and its reasoning so far, and writes the next
sentence; that sentence becomes the next search query. ``ircot_steps`` counts reasoning calls and is
bounded by ``graph.max_ircot_steps``; a sentence that repeats an earlier one also ends the loop.

The loop ends when the sentence states the answer ("So the answer is: ..."), IRCoT's own rule, not
when the model merely sets ``answer_found``: the small local model claims it after the first hop of a
bridge question, answering from the wrong entity. (Trusting ``answer_found`` saved about one call
per question and lost one of 17 iterative questions it was not written from: it was removed.)

Two other step forms were measured against this one on the 26 iterative questions of the mixed report
split and removed (docs/benchmarks.md, session 16): fact / answer / next search as JSON fields (the
model filled the answer at the first step, ending every chain after one hop: 0 won, 2 lost) and fact /
next search (0 won, 1 lost once a fragile question is discounted; about a third less time).
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from graphs.rag.nodes._llm import ask_structured
from graphs.rag.nodes._passages import answer_language, format_passages, hits_from_state, passage_from_hit
from graphs.rag.nodes._question_facts import in_users_script
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt

IRCOT_PASSAGES = 8
IRCOT_PASSAGE_CHARS = 2400  # shared by the passages shown at one step (the local model has 4k tokens)
THOUGHT_MAX_CHARS = 400
STATES_ANSWER = re.compile(r"\banswer is\b|答案是|答案为", re.IGNORECASE)  # IRCoT's "So the answer is: X"


class ReasoningStep(BaseModel):
    thought: str = Field(description="the next reasoning sentence")
    answer_found: bool = Field(description="true when the reasoning now states the answer")


def _reasoning_block(reasoning: list[str]) -> str:
    if not reasoning:
        return "(none yet)"
    return "\n".join(f"{i}. {thought}" for i, thought in enumerate(reasoning, start=1))


@records_step
def ircot_reason(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    counter = state.get("ircot_steps", 0) + 1
    bound = resources.options.graph.max_ircot_steps
    reasoning = list(state.get("reasoning") or [])
    hits = hits_from_state(state.get("hits") or [])[:IRCOT_PASSAGES]
    per_passage = IRCOT_PASSAGE_CHARS // max(len(hits), 1)
    shown = [passage_from_hit(i, h, h.text[:per_passage]) for i, h in enumerate(hits, start=1)]
    match_script = resources.options.graph.answer_in_users_script
    user = (
        f"{format_passages(shown)}\n\nQuestion: {state['standalone_question']}\n"
        f"Language: {answer_language(state, match_script)}\n"
        f"Reasoning so far:\n{_reasoning_block(reasoning)}\n\nNext reasoning sentence:"
    )
    step, error = ask_structured(resources.llm, ReasoningStep, load_prompt("ircot_reason"), user, config)
    decision: dict[str, Any] = {"counter": counter, "bound": bound, "passages_seen": len(hits)}
    if step is None:
        decision.update(error=error, stop="reasoning output unusable: answer from what was gathered")
        return {"ircot_steps": counter, "reasoning_done": True, "decision": decision}
    # The thought is the next search query: in the user's script it matches their documents' words.
    thought = in_users_script(" ".join(step.thought.split())[:THOUGHT_MAX_CHARS], state, match_script)
    repeated = thought.lower() in {r.lower() for r in reasoning}
    states_answer = bool(STATES_ANSWER.search(thought))
    done = states_answer or not thought or repeated
    decision.update(thought=thought, answer_found=step.answer_found, states_answer=states_answer)
    if step.answer_found and not states_answer:
        decision["note"] = "answer_found claimed without stating the answer: one more step"
    if repeated:
        decision["stop"] = "the reasoning repeated itself"
    elif states_answer:
        decision["stop"] = "the reasoning states the answer"
    elif not thought:
        decision["stop"] = "the reasoning step was empty"
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
