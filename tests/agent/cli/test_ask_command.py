"""``ragpilot ask``: the short answer first; a hosted LLM that stays down is one error line on stderr and the
last JSON trace line."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agent.cli import app
from agent.cli.ask_command import format_answer
from core.answer import Answer, Citation
from tests.fakes.openai_server import FakeOpenAIServer


def test_a_failing_hosted_llm_ends_the_json_trace_with_its_error(ragpilot_home):
    with FakeOpenAIServer() as server:
        server.script_chat(*[FakeOpenAIServer.server_error(500) for _ in range(6)])
        env = {
            "OPENAI_API_KEY": "test-key",
            "RAGPILOT_LLM__BASE_URL": server.base_url,
            "RAGPILOT_LLM__MODEL": "gpt-test",
            "RAGPILOT_LLM__MAX_RETRIES": "1",
        }
        result = CliRunner().invoke(
            app, ["ask", "Hello there!", "--route", "direct", "--trace", "--json"], env=env
        )

    assert result.exit_code != 0
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [line["node"] for line in lines if line["type"] == "step"][:2] == ["start_turn", "route_question"]
    error = lines[-1]
    assert error["type"] == "error" and "500" in error["error"] and error["after_step"] == "route_question"
    assert "error:" in result.stderr


def test_the_printed_answer_starts_with_the_short_answer_then_the_cited_sentences():
    answer = Answer(
        question="How many days of annual leave do employees get?",
        answer="Every employee gets 25 days of paid annual leave per year [1].",
        short_answer="25 days",
        citations=[
            Citation(n=1, chunk_id="h::c0", doc_id="h", source="samples/handbook.md", title="Handbook")
        ],
        run_id="r",
    )
    lines = format_answer(answer).splitlines()
    assert lines[:3] == ["25 days", "", "Every employee gets 25 days of paid annual leave per year [1]."]
    assert "  [1] Handbook — samples/handbook.md" in lines


def test_an_invalid_budget_option_is_one_error_line_naming_it(ragpilot_home):
    result = CliRunner().invoke(app, ["ask", "How many days?", "--max-llm-calls", "0"])
    assert result.exit_code == 2
    assert "--max-llm-calls" in result.stderr and "Traceback" not in result.output


def test_a_partial_answer_says_which_budget_ran_out():
    answer = Answer(
        question="q",
        answer="Employees get 25 days [1].",
        partial=True,
        budget_exhausted="llm_calls: 1 of 1",
        run_id="r",
    )
    assert (
        format_answer(answer).splitlines()[-1]
        == "(partial answer: the question's budget ran out — llm_calls: 1 of 1)"
    )
