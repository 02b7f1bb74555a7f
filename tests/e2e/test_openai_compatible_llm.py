"""ragpilot with a real OpenAI-compatible model server as its LLM (issue 23): llama.cpp's own server on
127.0.0.1, reached through ``llm.base_url`` exactly as a user points ragpilot at Ollama, vLLM, LM Studio
or llama.cpp. A cited answer, a refusal, a follow-up on a thread, the support judge's structured output,
and streamed tokens: the whole answer path, with nothing faked."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.agent import Agent
from agent.run_loop import FinalAnswer, TokenDelta
from core.settings import load_settings
from tools.knowledge_base.ingest import ingest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.llm


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory, llama_server) -> Iterator[Agent]:  # type: ignore[no-untyped-def]
    home = tmp_path_factory.mktemp("llama-server-home")
    settings = load_settings(
        home=home, llm={"provider": "openai", "base_url": llama_server.base_url, "model": llama_server.model}
    )
    ingest([REPO_ROOT / "samples"], settings, progress=False)
    agent = Agent(settings)
    yield agent
    agent.close()


def test_a_cited_answer_with_the_support_judge_on_the_servers_json_mode(agent: Agent) -> None:
    answer = agent.ask("How many days of paid annual leave do Northwind employees get?", route="single")

    assert not answer.refused and re.search(r"(?<![\d.])25(?![\d.])", answer.answer)
    assert any(c.source.endswith("handbook.md") for c in answer.citations)
    # The support judge ran (structured output) and gave verdicts, not "unchecked".
    assert answer.support and all(v.verdict != "unchecked" for v in answer.support)


def test_a_question_the_documents_do_not_answer_is_refused(agent: Agent) -> None:
    answer = agent.ask("What is the name of the Northwind CEO's dog?", route="single")

    assert answer.refused and not answer.citations


def test_a_follow_up_on_a_thread_is_read_against_the_first_turn(agent: Agent) -> None:
    agent.ask("How many days of paid annual leave do Northwind employees get?", thread_id="leave")
    second = agent.ask("And how many of them can be carried over?", thread_id="leave")

    assert "leave" in (second.standalone_question or "").lower()
    assert not second.refused and re.search(r"(?<![\d.])5(?![\d.])", second.answer)


def test_the_answer_streams_token_by_token(agent: Agent) -> None:
    events = list(agent.stream("每台 HX-200 的电池续航是多少？", route="single"))

    tokens = [e.text for e in events if isinstance(e, TokenDelta)]
    final = events[-1]
    assert isinstance(final, FinalAnswer) and not final.answer.refused
    assert len(tokens) > 3 and "小时" in final.answer.answer
