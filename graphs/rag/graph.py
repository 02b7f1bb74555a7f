"""The agent graph's wiring: nodes and edges only (node bodies live in ``nodes/``, edge logic in ``routing.py``).

start_turn → [contextualize] → route_question
  direct    → generate_direct → finalize_answer
  single    → [reuse_or_retrieve] → transform_query → retrieve → grade_retrieval (CRAG)
                correct → expand_context; ambiguous → web_search → expand_context;
                incorrect → web_search | crag_retry → retrieve | refuse
  iterative → retrieve ⇄ ircot_reason (IRCoT) → expand_context
expand_context → refine_passages → check_answerable (do the passages state it?) → generate_answer
  → check_support (IsSup + IsUse)
  unsupported → regenerate_answer → check_support; not useful → usefulness_retry → retrieve
  → finalize_answer | refuse
A question escalated from direct only because the documents might hold it gets one retrieval pass:
  refuse | crag_retry | usefulness_retry → generate_direct
Every conditional edge goes to stop_on_budget instead once the question's budget is spent
  → finalize_answer (the draft so far, flagged partial) | refuse
"""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from core.settings import Settings
from graphs.rag import routing
from graphs.rag.nodes.check_answerable import check_answerable
from graphs.rag.nodes.check_support import check_support
from graphs.rag.nodes.contextualize import contextualize
from graphs.rag.nodes.crag_retry import crag_retry
from graphs.rag.nodes.expand_context import expand_context
from graphs.rag.nodes.finalize_answer import finalize_answer
from graphs.rag.nodes.generate_answer import generate_answer
from graphs.rag.nodes.generate_direct import generate_direct
from graphs.rag.nodes.grade_retrieval import grade_retrieval
from graphs.rag.nodes.ircot_reason import ircot_reason
from graphs.rag.nodes.refine_passages import refine_passages
from graphs.rag.nodes.refuse import refuse
from graphs.rag.nodes.regenerate_answer import regenerate_answer
from graphs.rag.nodes.retrieve import retrieve
from graphs.rag.nodes.reuse_or_retrieve import reuse_or_retrieve
from graphs.rag.nodes.route_question import route_question
from graphs.rag.nodes.start_turn import start_turn
from graphs.rag.nodes.stop_on_budget import stop_on_budget
from graphs.rag.nodes.transform_query import transform_query
from graphs.rag.nodes.usefulness_retry import usefulness_retry
from graphs.rag.nodes.web_search import web_search
from graphs.rag.resources import Resources
from graphs.rag.run_context import RunContext
from graphs.rag.state import RagInput, RagOutput, RagState

# Each node is registered under its function's name (also its file's name and its trace step's name).
NODES = {
    node.__name__: node
    for node in (
        start_turn,
        contextualize,
        route_question,
        reuse_or_retrieve,
        transform_query,
        retrieve,
        ircot_reason,
        grade_retrieval,
        web_search,
        crag_retry,
        expand_context,
        refine_passages,
        check_answerable,
        generate_answer,
        regenerate_answer,
        check_support,
        usefulness_retry,
        generate_direct,
        stop_on_budget,
        finalize_answer,
        refuse,
    )
}


def build_graph(
    settings: Settings,
    *,
    resources: Resources | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the RAG graph. ``resources`` defaults to collaborators built lazily from ``settings``;
    pass a ``checkpointer`` to keep threads (see ``graphs.rag.checkpointer.open_checkpointer``)."""
    resources = resources or Resources(settings)
    bounds = settings.graph
    builder = StateGraph(RagState, context_schema=RunContext, input_schema=RagInput, output_schema=RagOutput)
    for name, node in NODES.items():
        builder.add_node(name, partial(node, resources=resources))

    def branch(source: str, edge: Any, destinations: list[str]) -> None:
        """A conditional edge that also stops the turn once its budget is spent; where it may refuse or
        retrieve again, a question escalated from 'direct' is answered from memory instead."""
        if routing.NO_ANSWER_FROM_THIS_PASS & set(destinations):
            edge = routing.direct_when_unanswered(edge, translate_first=bounds.retry_across_languages)
            destinations = [*destinations, "generate_direct"]
        builder.add_conditional_edges(source, routing.within_budget(edge), [*destinations, "stop_on_budget"])

    builder.add_edge(START, "start_turn")
    branch("start_turn", routing.after_start, ["contextualize", "route_question"])
    builder.add_edge("contextualize", "route_question")
    branch(
        "route_question",
        routing.after_route,
        ["generate_direct", "reuse_or_retrieve", "transform_query", "retrieve"],
    )
    branch("reuse_or_retrieve", routing.after_reuse, ["check_answerable", "transform_query", "retrieve"])
    builder.add_edge("transform_query", "retrieve")
    branch(
        "retrieve",
        partial(routing.after_retrieve, bounds=bounds),
        ["grade_retrieval", "ircot_reason", "expand_context"],
    )
    branch("ircot_reason", routing.after_ircot, ["retrieve", "expand_context"])
    branch("grade_retrieval", routing.after_grade, ["expand_context", "web_search", "crag_retry", "refuse"])
    branch(
        "web_search", partial(routing.after_web, bounds=bounds), ["expand_context", "crag_retry", "refuse"]
    )
    builder.add_edge("crag_retry", "retrieve")
    builder.add_edge("expand_context", "refine_passages")
    branch("refine_passages", routing.after_refine, ["check_answerable", "refuse"])
    branch(
        "check_answerable",
        partial(routing.after_answerable, bounds=bounds),
        ["generate_answer", "usefulness_retry", "refuse"],
    )
    for generator in ("generate_answer", "regenerate_answer"):
        branch(
            generator,
            partial(routing.after_generate, bounds=bounds),
            ["check_support", "usefulness_retry", "refuse"],
        )
    branch(
        "check_support",
        partial(routing.after_support, bounds=bounds),
        ["regenerate_answer", "usefulness_retry", "finalize_answer", "refuse"],
    )
    builder.add_edge("usefulness_retry", "retrieve")
    builder.add_edge("generate_direct", "finalize_answer")
    builder.add_conditional_edges("stop_on_budget", routing.after_budget_stop, ["finalize_answer", "refuse"])
    builder.add_edge("finalize_answer", END)
    builder.add_edge("refuse", END)
    return builder.compile(checkpointer=checkpointer, name="ragpilot")


def __getattr__(name: str) -> Any:
    """``graph``: the graph compiled from default settings, built on first access — the name
    ``langgraph.json`` points LangGraph's own tooling (``langgraph dev``, the API server) at."""
    if name == "graph":
        from core.settings import load_settings

        compiled = build_graph(load_settings())
        globals()["graph"] = compiled
        return compiled
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
