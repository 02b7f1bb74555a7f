"""ragpilot as a node (subgraph) of a larger LangGraph app: a support desk that answers tickets.

The parent graph has its own state (a ticket in, a reply out). One of its nodes runs the compiled
ragpilot graph, mapping the parent state onto ragpilot's input schema (``RagInput``: ``question``,
optional ``route_request``) and its output schema (``RagOutput``: ``answer``, ``citations``,
``refused``, ``route``, ...) back onto the parent state::

    START → extract_question → ask_ragpilot (the ragpilot graph) → draft_reply → END

The caller's identity travels the LangGraph way, in the run's context
(``desk.invoke(..., context=RunContext(user_groups=...))``); LangGraph hands the parent's context to
the subgraph, so its searches see only what those groups may read.

Run it (after ``ragpilot ingest samples/``)::

    python examples/subgraph_example.py "Hi, how many days of annual leave do I get per year?"
"""

from __future__ import annotations

import sys
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from core.settings import Settings, load_settings
from graphs.rag.graph import build_graph
from graphs.rag.resources import Resources
from graphs.rag.run_context import RunContext

GREETINGS = ("hi", "hello", "dear", "您好", "你好")


class TicketState(TypedDict, total=False):
    """The support desk's own state: nothing here is ragpilot's."""

    ticket: str
    question: str
    answer: str
    citations: list[dict[str, Any]]  # ragpilot's citation objects, kept for the desk's ticket view
    sources: list[str]
    escalate: bool
    reply: str


def extract_question(state: TicketState) -> dict[str, Any]:
    """The ticket without its greeting line is the question (a real desk might classify it here)."""
    lines = [line.strip() for line in state["ticket"].strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(lines) > 1 and first.rstrip(",，!！ ").lower() in GREETINGS:
        lines = lines[1:]
    text = " ".join(lines)
    for greeting in GREETINGS:  # "Hi, how many ..." → "how many ..."
        if text.lower().startswith(greeting + ",") or text.startswith(greeting + "，"):
            text = text[len(greeting) + 1 :].strip()
    return {"question": text}


def make_ragpilot_node(rag_graph: Any) -> Any:
    """A parent-graph node that runs the compiled ragpilot graph with the schema mapping both ways."""

    def ask_ragpilot(state: TicketState, config: RunnableConfig) -> dict[str, Any]:
        rag_input = {"question": state["question"]}  # RagInput
        rag_output = rag_graph.invoke(rag_input, config)  # RagOutput
        sources = []
        for citation in rag_output.get("citations") or []:
            where = citation.get("url") or citation.get("title") or citation.get("source")
            sources.append(f"[{citation['n']}] {where}")
        return {
            "answer": rag_output.get("answer", ""),
            "citations": list(rag_output.get("citations") or []),
            "sources": sources,
            "escalate": bool(rag_output.get("refused")),
        }

    return ask_ragpilot


def draft_reply(state: TicketState) -> dict[str, Any]:
    if state.get("escalate"):
        return {
            "reply": "Thanks for your message. A colleague will get back to you: our documents do not cover it."
        }
    sources = "\n".join(state.get("sources") or [])
    return {"reply": f"Thanks for your message.\n\n{state['answer']}\n\nSources:\n{sources}"}


def build_support_desk(settings: Settings, resources: Resources | None = None) -> Any:
    """The parent graph, with ragpilot (compiled from ``settings``) as its ``ask_ragpilot`` node."""
    rag_graph = build_graph(settings, resources=resources)
    builder = StateGraph(TicketState)
    builder.add_node("extract_question", extract_question)
    builder.add_node("ask_ragpilot", make_ragpilot_node(rag_graph))
    builder.add_node("draft_reply", draft_reply)
    builder.add_edge(START, "extract_question")
    builder.add_edge("extract_question", "ask_ragpilot")
    builder.add_edge("ask_ragpilot", "draft_reply")
    builder.add_edge("draft_reply", END)
    return builder.compile(name="support_desk")


def main(argv: list[str]) -> int:
    ticket = " ".join(argv) or "Hi, how many days of annual leave do I get per year?"
    settings = load_settings()
    resources = Resources(settings)
    try:
        desk = build_support_desk(settings, resources)
        result = desk.invoke({"ticket": ticket}, context=RunContext(user_groups=tuple(settings.user_groups)))
    finally:
        resources.close()
    print(result["reply"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
