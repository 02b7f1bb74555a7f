"""The embedding examples end to end: ragpilot as a subgraph node, and as another agent's tool."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.agent import Agent
from core.settings import Settings
from graphs.rag.run_context import RunContext
from tests.examples.conftest import load_example

subgraph_example = load_example("subgraph_example")
tool_example = load_example("tool_example")


def test_ticket_greeting_is_not_part_of_the_question() -> None:
    update = subgraph_example.extract_question({"ticket": "Hi,\nHow many sick days do I get?\n"})
    assert update == {"question": "How many sick days do I get?"}
    assert subgraph_example.extract_question({"ticket": "Hello, what is X?"}) == {"question": "what is X?"}


def test_the_tool_takes_only_a_question(example_agent: Agent) -> None:
    tool = tool_example.make_ragpilot_tool(example_agent)
    assert tool.name == "ask_documents"
    assert set(tool.args) == {"question"}  # ACL groups come from the run config, never from the model


def test_the_outer_loop_is_bounded_even_if_the_model_keeps_calling_tools() -> None:
    calls: list[str] = []

    class AlwaysCallsTool(tool_example.ScriptedToolCaller):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            calls.append("model")
            call = {"name": "echo", "args": {"text": "again"}, "id": f"c{len(calls)}", "type": "tool_call"}
            from langchain_core.outputs import ChatGeneration, ChatResult

            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=[call]))])

    from langchain_core.tools import StructuredTool

    echo = StructuredTool.from_function(lambda text: text, name="echo", description="echo the text")
    assistant = tool_example.build_assistant(AlwaysCallsTool(), [echo])
    result = assistant.invoke({"messages": [HumanMessage("loop")], "model_turns": 0})
    assert result["model_turns"] == tool_example.MAX_MODEL_TURNS == len(calls)


@pytest.mark.llm
def test_support_desk_answers_a_ticket_through_the_ragpilot_subgraph(
    example_settings: Settings, example_agent: Agent
) -> None:
    desk = subgraph_example.build_support_desk(example_settings, example_agent.resources)
    result = desk.invoke(
        {"ticket": "Hi,\nHow many days of paid sick leave do employees get per year?"},
        context=RunContext(user_groups=("public",)),
    )
    assert result["question"] == "How many days of paid sick leave do employees get per year?"
    assert not result["escalate"]
    assert re.search(r"(?<![\d.])12(?![\d.])", result["answer"])
    # RagOutput's citations map onto the desk's source lines, one each, in order.
    assert [s.split("]")[0] for s in result["sources"]] == [f"[{c['n']}" for c in result["citations"]]
    assert all(c["source"].endswith("leave-policy.md") for c in result["citations"])
    assert result["reply"].startswith("Thanks for your message.") and result["answer"] in result["reply"]


@pytest.mark.llm
def test_another_agent_consults_ragpilot_as_a_tool(example_agent: Agent) -> None:
    assistant = tool_example.build_assistant(
        tool_example.ScriptedToolCaller(), [tool_example.make_ragpilot_tool(example_agent)]
    )
    result = assistant.invoke(
        {"messages": [HumanMessage("How many days per week may employees work remotely?")], "model_turns": 0},
        {"configurable": {"user_groups": ["public"]}},
    )
    messages = result["messages"]
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert messages[1].tool_calls[0]["args"] == {
        "question": "How many days per week may employees work remotely?"
    }
    tool_reply = messages[2]
    assert isinstance(tool_reply, ToolMessage) and tool_reply.status != "error"
    answer_text, _, sources = tool_reply.content.partition("\n\nSources:\n")
    assert re.search(r"(?<![\d.\[])2(?![\d.\]])", answer_text)  # 2 days per week (not a [2] citation)
    assert sources
    assert "leave-policy.md" in sources
    assert tool_reply.content in messages[3].content
