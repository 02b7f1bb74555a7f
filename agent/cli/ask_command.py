"""``ragpilot ask "question"``: one answer with numbered sources (or one JSON object with ``--json``)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from pydantic import ValidationError

from agent.cli.app import AUTO_ROUTE, RouteOption, app, fail
from core.answer import Answer
from core.errors import ConfigError, FilterError, RagpilotError
from core.settings import QuestionBudget


def format_answer(answer: Answer) -> str:
    """The answer as a reader sees it (``Answer.readable_text``)."""
    return answer.readable_text()


def question_budget(
    seconds: float | None, llm_calls: int | None, llm_tokens: int | None
) -> QuestionBudget | None:
    """The limits given on the command line (the others stay as in settings); ConfigError when invalid."""
    given = {
        name: value
        for name, value in (("seconds", seconds), ("llm_calls", llm_calls), ("llm_tokens", llm_tokens))
        if value is not None
    }
    if not given:
        return None
    try:
        return QuestionBudget(**given)
    except ValidationError as exc:
        problem = exc.errors()[0]
        option = "--max-" + str(problem["loc"][0]).replace("_", "-")
        raise ConfigError(f"{option}: {problem['msg']}") from exc


@app.command("ask")
def ask_command(
    question: Annotated[str, typer.Argument(help="the question, in English or Chinese")],
    as_json: Annotated[
        bool, typer.Option("--json", help="print the Answer as one JSON object (last line)")
    ] = False,
    route: Annotated[
        RouteOption, typer.Option("--route", help="force a route instead of the classifier")
    ] = AUTO_ROUTE,
    thread: Annotated[
        str | None, typer.Option("--thread", help="continue (or start) this conversation thread")
    ] = None,
    groups: Annotated[
        list[str] | None, typer.Option("--group", help="ask as these ACL groups (repeatable)")
    ] = None,
    trace: Annotated[
        bool,
        typer.Option("--trace", help="print each step live as a tree (with --json: one JSON line per step)"),
    ] = False,
    max_seconds: Annotated[
        float | None, typer.Option("--max-seconds", help="this question's time budget (default graph.budget)")
    ] = None,
    max_llm_calls: Annotated[
        int | None, typer.Option("--max-llm-calls", help="this question's LLM-call budget")
    ] = None,
    max_llm_tokens: Annotated[
        int | None, typer.Option("--max-llm-tokens", help="this question's LLM-token budget (input + output)")
    ] = None,
) -> None:
    """Answer a question from the knowledge base, citing numbered sources."""
    from agent.agent import Agent

    agent = None
    try:
        budget = question_budget(max_seconds, max_llm_calls, max_llm_tokens)
        agent = Agent()
        from agent.run_loop import ask_traced  # the run is stored under traces_dir for `ragpilot trace`

        answer = ask_traced(
            agent, question, trace=trace, as_json=as_json, thread_id=thread, groups=groups, route=route.value,
            budget=budget,
        )  # fmt: skip
    except RagpilotError as exc:
        fail(str(exc), 2 if isinstance(exc, ConfigError | FilterError) else 1)
    finally:
        if agent is not None:
            agent.close()
    if as_json:
        typer.echo(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False))
    else:
        typer.echo(format_answer(answer))
