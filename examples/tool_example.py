"""ragpilot as a tool of another agent: a small LangGraph ReAct-style agent that consults the documents.

``make_ragpilot_tool(agent)`` wraps ``Agent.ask`` as a LangChain ``StructuredTool``
(``ask_documents(question) -> answer with numbered sources``). Its only argument is the question: the
caller's ACL groups come from the run's ``config["configurable"]["user_groups"]``, so the model
driving the outer agent can never widen what it may read.

The outer agent is the classic loop ``assistant ⇄ tools`` (``ToolNode`` from ``langgraph.prebuilt``),
with a bound on its model turns. Any tool-calling chat model drives it (``ChatOpenAI`` when
``OPENAI_API_KEY`` is set); offline, ``ScriptedToolCaller`` stands in for it: it asks the documents
once, then relays the tool's answer. ragpilot itself answers with the local models either way.

Run it (after ``ragpilot ingest samples/``)::

    python examples/tool_example.py "How many days of sick leave do employees get?"
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from agent.agent import Agent
from core.settings import load_settings

TOOL_NAME = "ask_documents"
MAX_MODEL_TURNS = 4  # the outer loop's bound: model turns before it must stop


class AskDocumentsInput(BaseModel):
    question: str = Field(description="a standalone question about the company's documents")


def make_ragpilot_tool(agent: Agent) -> StructuredTool:
    """``ask_documents``: ragpilot's cited answer to one question, as text with numbered sources."""

    def ask_documents(question: str, config: RunnableConfig) -> str:
        groups = (config.get("configurable") or {}).get("user_groups")  # identity from the run, not the model
        answer = agent.ask(question, groups=groups)
        if answer.refused:
            return f"The documents do not answer this. ({answer.refusal_reason or 'no supporting passage'})"
        sources = "\n".join(
            f"[{c.n}] {c.title or c.doc_id} — {c.url or c.source}" + (f", p.{c.page}" if c.page else "")
            for c in answer.citations
        )
        return f"{answer.answer}\n\nSources:\n{sources}" if sources else answer.answer

    return StructuredTool.from_function(
        ask_documents,
        name=TOOL_NAME,
        description="Answer a question from the company's documents, with numbered sources.",
        args_schema=AskDocumentsInput,
    )


class ScriptedToolCaller(BaseChatModel):
    """An offline stand-in for a tool-calling model: calls ``ask_documents`` with the user's question
    once, then answers with what the tool returned. (For demos and tests; use a real model in apps.)"""

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-caller"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolCaller:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        tool_results = [m for m in messages if isinstance(m, ToolMessage)]
        if tool_results:
            reply = AIMessage(content=f"Here is what the documents say:\n\n{tool_results[-1].content}")
        else:
            question = next(m.content for m in reversed(messages) if isinstance(m, HumanMessage))
            reply = AIMessage(
                content="",
                tool_calls=[
                    {"name": TOOL_NAME, "args": {"question": question}, "id": "call-1", "type": "tool_call"}
                ],
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


class AssistantState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    model_turns: int


def build_assistant(chat_model: BaseChatModel, tools: list[BaseTool]) -> Any:
    """The outer ReAct-style agent: the model decides, the tools act, until the model answers."""
    model = chat_model.bind_tools(tools)

    def assistant(state: AssistantState, config: RunnableConfig) -> dict[str, Any]:
        return {
            "messages": [model.invoke(state["messages"], config)],
            "model_turns": state.get("model_turns", 0) + 1,
        }

    def next_step(state: AssistantState) -> str:
        last = state["messages"][-1]
        wants_tool = isinstance(last, AIMessage) and bool(last.tool_calls)
        return "tools" if wants_tool and state["model_turns"] < MAX_MODEL_TURNS else END

    builder = StateGraph(AssistantState)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", next_step, ["tools", END])
    builder.add_edge("tools", "assistant")
    return builder.compile(name="assistant_with_ragpilot")


def default_chat_model() -> BaseChatModel:
    if os.environ.get("OPENAI_API_KEY"):
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), temperature=0)
    return ScriptedToolCaller()


def main(argv: list[str]) -> int:
    question = " ".join(argv) or "How many days of sick leave do employees get?"
    settings = load_settings()
    agent = Agent(settings)
    try:
        assistant = build_assistant(default_chat_model(), [make_ragpilot_tool(agent)])
        result = assistant.invoke(
            {"messages": [HumanMessage(question)], "model_turns": 0},
            {"configurable": {"user_groups": settings.user_groups}},
        )
    finally:
        agent.close()
    print(result["messages"][-1].content)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
