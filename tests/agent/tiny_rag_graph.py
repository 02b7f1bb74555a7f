"""A tiny real LangGraph graph following the agent graph's conventions, for tests that need a graph run
without the LLM: nodes decorated with ``records_step`` (so each appends a real step entry), a
``messages`` history, a bounded retry loop, and a knowledge "base" that is a dict of passages.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite

from graphs.rag.nodes._step import records_step

PASSAGES = {
    "kb-1": ("Falcon latency", "The Falcon service answers in 40 ms at p50."),
    "kb-2": ("Heron latency", "The Heron service answers in 95 ms at p50."),
}


class TinyState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    hits: list[dict[str, Any]]
    answer: str
    retries: int
    steps: Annotated[list[dict[str, Any]], lambda a, b: a + b]


@records_step
def start_turn(state: TinyState, config: RunnableConfig) -> dict[str, Any]:
    return {
        "steps": Overwrite([]),
        "retries": 0,
        "messages": [HumanMessage(state["question"])],
        "decision": {"question": state["question"], "history_turns": len(state.get("messages", []))},
    }


@records_step
def retrieve(state: TinyState, config: RunnableConfig) -> dict[str, Any]:
    words = {w.strip("?.,").lower() for w in state["question"].split()}
    hits = [
        {
            "chunk_id": cid,
            "title": title,
            "text": text,
            "score": 1.0 / (rank + 1),
            "legs": {"dense": {"rank": rank + 1, "score": 0.8 - rank / 10}},
        }
        for rank, (cid, (title, text)) in enumerate(PASSAGES.items())
        if words & {w.strip(".").lower() for w in (title + " " + text).split()}
    ]
    time.sleep(0.01)  # a visible bar in the waterfall
    return {"hits": hits, "decision": {"queries": [state["question"]], "hits": hits}}


RETRY_BOUND = 1


@records_step
def grade(state: TinyState, config: RunnableConfig) -> dict[str, Any]:
    retry = not state["hits"] and state.get("retries", 0) < RETRY_BOUND
    retries = state.get("retries", 0) + int(retry)
    action = "correct" if state["hits"] else "retry" if retry else "give_up"
    return {
        "retries": retries,
        "decision": {"crag_action": action, "retry": {"counter": retries, "bound": RETRY_BOUND}},
    }


def after_grade(state: TinyState) -> str:
    """Retry when grade decided to (nothing found, counter below its bound); otherwise answer."""
    return "retrieve" if state["steps"][-1]["decision"]["crag_action"] == "retry" else "generate"


@records_step
def generate(state: TinyState, config: RunnableConfig) -> dict[str, Any]:
    if state["hits"]:
        answer = " ".join(f"{h['text']} [{n}]" for n, h in enumerate(state["hits"], start=1))
    else:
        answer = "The sources do not say."
    return {"answer": answer, "messages": [AIMessage(answer)], "decision": {"sentences": answer.count(".")}}


def build_tiny_graph(checkpointer: BaseCheckpointSaver | None = None) -> Any:
    builder = StateGraph(TinyState)
    builder.add_node("start_turn", start_turn)
    builder.add_node("retrieve", retrieve)
    builder.add_node("grade", grade)
    builder.add_node("generate", generate)
    builder.add_edge(START, "start_turn")
    builder.add_edge("start_turn", "retrieve")
    builder.add_edge("retrieve", "grade")
    builder.add_conditional_edges("grade", after_grade, ["retrieve", "generate"])
    builder.add_edge("generate", END)
    return builder.compile(checkpointer=checkpointer)
