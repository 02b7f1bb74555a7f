"""A multi-hop question with its bridge named (``graph.name_bridges``): what the reader answers.

The 1.5B reader does not join a bridge passage to the question by itself. With "The Harwick Orchestra is
led by Lena Sorvik" and "Lena Sorvik trained as a cellist" both in its context, asked "What instrument
did the conductor of the Harwick Orchestra train on?", it answers from the first passage alone (the
failure as seen on bench/data/multi_hop_questions.jsonl). A single-hop question it answers well. So the
model copies two spans, the words of the question that describe something ("the conductor of the Harwick
Orchestra") and the name the passages give it ("Lena Sorvik"), and code checks both copies and writes the
single-hop question ("What instrument did Lena Sorvik train on?"); copying is within a small model's
reach where chaining is not. The reader sees it beside the question it answers, and the checks judge the
answer to the question as asked.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from graphs.rag.nodes._llm import ask_structured
from graphs.rag.nodes._passages import format_passages
from graphs.rag.nodes._question_facts import facts_of
from graphs.rag.resources import Resources
from graphs.rag.state import ContextPassage, RagState
from prompts import load_prompt


class BridgeSpans(BaseModel):
    description: str = Field(description="the question's words that describe something without naming it")
    name: str = Field(description="its name, as the passages write it")


def _spaced(text: str) -> str:
    return " ".join(text.split())


def _folded(text: str) -> str:
    return _spaced(text).casefold()


def bridged_question(question: str, spans: BridgeSpans, context: list[ContextPassage]) -> tuple[str, str]:
    """(the question with the description replaced by the name, '') when both copies hold: the
    description is in the question, the name in a passage and not already in the question (so not in
    the description either); ('', why not) otherwise."""
    description, name = _spaced(spans.description), _spaced(spans.name)
    if not description or not name:
        return "", "nothing described"
    spaced = _spaced(question)
    found = re.search(re.escape(description), spaced, re.IGNORECASE)
    if found is None:
        return "", "the description is not the question's words"
    folded_name = _folded(name)
    if not any(folded_name in _folded(p["text"]) for p in context):
        return "", "no passage writes the name"
    if folded_name in _folded(spaced):
        return "", "the question already names it"
    return f"{spaced[: found.start()]}{name}{spaced[found.end() :]}", ""


def bridge_for(state: RagState, resources: Resources, config: RunnableConfig) -> dict[str, Any]:
    """On the iterative route with ``graph.name_bridges``, not for a yes/no question: the question with
    its bridge named, and what the model copied, for the state and the trace; {} when off."""
    context = state.get("context") or []
    if not (
        resources.options.graph.name_bridges
        and state.get("route") == "iterative"
        and context
        and not facts_of(state).asks_yes_no
    ):
        return {}
    question = state["standalone_question"]
    user = f"{format_passages(context)}\n\nQuestion: {question}"
    spans, error = ask_structured(resources.llm, BridgeSpans, load_prompt("bridge_name"), user, config)
    if spans is None:
        return {"question": "", "rejected": error or "no reply"}
    bridged, rejected = bridged_question(question, spans, context)
    found = {"question": bridged, "description": spans.description, "name": spans.name}
    return {**found, "rejected": rejected} if rejected else found


def bridge_instruction(bridge: dict[str, Any]) -> str:
    """The lines that show the reader its question with the bridge named; '' without one."""
    if not bridge.get("question"):
        return ""
    return (
        load_prompt("bridge_question")
        .format(description=bridge["description"], name=bridge["name"], bridged=bridge["question"])
        .strip()
    )
