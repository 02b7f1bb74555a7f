"""The peer ragpilot is measured against (issue 22, item 3): what a LangGraph user builds first, the design of
LangGraph's adaptive-RAG tutorial graph, rebuilt on ragpilot's retriever and local model.

    retrieve -> grade documents (one yes/no LLM call per document) -> generate
      no relevant document        -> rewrite the question -> retrieve
      generate -> hallucination grader (grounded in the documents?) -> answer grader (answers it?)
          not grounded -> generate again;  grounded but not useful -> rewrite -> retrieve;  both -> end

The tutorial's router chooses between the vector store and web search; with no web search offline, every
question goes to the vector store, as the tutorial's own graph does for questions on its documents.
Its prompts are the tutorial's (binary "yes"/"no" graders, "Use three sentences maximum and keep the
answer concise"); its loops are unbounded there (LangGraph's recursion limit ends them), so here each
loop gets the bound ragpilot uses (2 rewrites, 2 regenerations) and running out of them is a refusal.
Retrieval is ragpilot's hybrid search + default reranker, top 4 (the tutorial's k); the model is the same
local Qwen 1.5B. A reply saying it does not know counts as a refusal.

``answer_question(question, resources)`` returns an ``Answer`` (text, refused, LLM calls, time), so
``bench/mixed_set.py --peer`` scores it exactly like ragpilot's.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any, Literal, TypedDict

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from core.answer import Answer
from graphs.rag.inspection import count_llm_usage
from graphs.rag.resources import Resources

TOP_K = 4
CANDIDATES = 30  # fused hits the reranker sees, as in ragpilot
MAX_REWRITES = 2
MAX_REGENERATIONS = 2

GRADE_DOCUMENT = """You are a grader assessing relevance of a retrieved document to a user question. \
If the document contains keyword(s) or semantic meaning related to the user question, grade it as relevant. \
It does not need to be a stringent test. The goal is to filter out erroneous retrievals. \
Give a binary score 'yes' or 'no' score to indicate whether the document is relevant to the question."""
GENERATE = """You are an assistant for question-answering tasks. Use the following pieces of retrieved context \
to answer the question. If you don't know the answer, just say that you don't know. Use three sentences \
maximum and keep the answer concise."""
GRADE_HALLUCINATION = """You are a grader assessing whether an LLM generation is grounded in / supported by a set \
of retrieved facts. Give a binary score 'yes' or 'no'. 'Yes' means that the answer is grounded in / supported \
by the set of facts."""
GRADE_ANSWER = """You are a grader assessing whether an answer addresses / resolves a question. Give a binary \
score 'yes' or 'no'. Yes' means that the answer resolves the question."""
REWRITE = """You a question re-writer that converts an input question to a better version that is optimized \
for vectorstore retrieval. Look at the input and try to reason about the underlying semantic intent / meaning. \
Reply with the improved question only."""

_DONT_KNOW = re.compile(
    r"\b(?:don'?t|do not|does not|doesn'?t|cannot|can'?t) (?:know|provide|find|answer|determine)|not (?:mentioned|provided|stated)"
    r"|无法|不知道|没有提(?:到|供)|未提(?:到|及)",
    re.IGNORECASE,
)


class BinaryScore(BaseModel):
    binary_score: Literal["yes", "no"] = Field(description="'yes' or 'no'")


class PeerState(TypedDict, total=False):
    question: str
    search_query: str
    documents: list[str]
    generation: str
    rewrites: int
    regenerations: int
    gave_up: bool


def build_peer(resources: Resources, groups: list[str]) -> Any:
    llm = resources.llm

    def ask(system: str, user: str) -> str:
        return str(llm.invoke([SystemMessage(system), HumanMessage(user)]).text).strip()

    def yes(system: str, user: str) -> bool:
        try:
            verdict = llm.with_structured_output(BinaryScore).invoke(
                [SystemMessage(system), HumanMessage(user)]
            )
        except Exception:  # noqa: BLE001 - a malformed grade counts as "no", as a failed parse would there
            return False
        return isinstance(verdict, BinaryScore) and verdict.binary_score == "yes"

    def retrieve(state: PeerState) -> PeerState:
        query = state.get("search_query") or state["question"]
        hits = resources.search([query], groups, CANDIDATES)
        hits = resources.reranker.rerank(query, hits, TOP_K) if hits else []
        return {"documents": [h.text for h in hits[:TOP_K]]}

    def grade_documents(state: PeerState) -> PeerState:
        kept = [
            d for d in state["documents"]
            if yes(GRADE_DOCUMENT, f"Retrieved document: \n\n {d} \n\n User question: {state['question']}")
        ]  # fmt: skip
        return {"documents": kept}

    def transform_query(state: PeerState) -> PeerState:
        rewritten = ask(
            REWRITE,
            f"Here is the initial question: \n\n {state['question']} \n Formulate an improved question.",
        )
        return {
            "search_query": rewritten.splitlines()[0] if rewritten else state["question"],
            "rewrites": state.get("rewrites", 0) + 1,
        }

    def generate(state: PeerState) -> PeerState:
        context = "\n\n".join(state["documents"])
        answer = ask(GENERATE, f"Question: {state['question']} \nContext: {context} \nAnswer:")
        return {
            "generation": answer,
            "regenerations": state.get("regenerations", 0) + (1 if state.get("generation") else 0),
        }

    def give_up(state: PeerState) -> PeerState:
        return {"gave_up": True}

    def decide_to_generate(state: PeerState) -> str:
        if state["documents"]:
            return "generate"
        return "transform_query" if state.get("rewrites", 0) < MAX_REWRITES else "give_up"

    def grade_generation(state: PeerState) -> str:
        facts = "\n\n".join(state["documents"])
        if not yes(
            GRADE_HALLUCINATION, f"Set of facts: \n\n {facts} \n\n LLM generation: {state['generation']}"
        ):
            return "generate" if state.get("regenerations", 0) < MAX_REGENERATIONS else "give_up"
        if yes(
            GRADE_ANSWER,
            f"User question: \n\n {state['question']} \n\n LLM generation: {state['generation']}",
        ):
            return "useful"
        return "transform_query" if state.get("rewrites", 0) < MAX_REWRITES else "give_up"

    graph = StateGraph(PeerState)
    for name, node in (("retrieve", retrieve), ("grade_documents", grade_documents), ("generate", generate),
                       ("transform_query", transform_query), ("give_up", give_up)):  # fmt: skip
        graph.add_node(name, node)
    graph.add_edge(START, "retrieve")
    graph.add_edge("retrieve", "grade_documents")
    graph.add_conditional_edges(
        "grade_documents", decide_to_generate, ["generate", "transform_query", "give_up"]
    )
    graph.add_edge("transform_query", "retrieve")
    graph.add_conditional_edges(
        "generate",
        grade_generation,
        {"generate": "generate", "transform_query": "transform_query", "give_up": "give_up", "useful": END},
    )
    graph.add_edge("give_up", END)
    return graph.compile()


def answer_question(
    question: str, resources: Resources, groups: list[str], graph: Any | None = None
) -> Answer:
    """One question through the peer graph, as an ``Answer`` scored like ragpilot's."""
    graph = graph or build_peer(resources, groups)
    started = time.perf_counter()
    with count_llm_usage() as usage:
        state = graph.invoke({"question": question}, {"recursion_limit": 60})
    text = state.get("generation") or ""
    refused = bool(state.get("gave_up")) or not text or bool(_DONT_KNOW.search(text))
    return Answer(
        question=question,
        answer=text,
        refused=refused,
        refusal_reason="peer: gave up or said it does not know" if refused else None,
        llm_calls=usage.calls,
        total_ms=round((time.perf_counter() - started) * 1000, 1),
        run_id=uuid.uuid4().hex,
    )
