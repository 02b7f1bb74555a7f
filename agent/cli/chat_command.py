"""``ragpilot chat [--thread ID]``: an interactive chat that streams answers token by token.

While the graph works, the current step is shown (a spinner on a terminal, a line of step names
otherwise); the answer is printed as the model writes it, then the short answer once the support check
has backed it ("→ 25 days"), then its numbered sources. If the support
checks change the answer after it was streamed (a regeneration, or unsupported sentences removed),
the checked answer is printed again. Commands: ``/new`` (start a new thread), ``/threads`` (list
threads), ``/exit``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from agent.cli.app import app, fail
from core.errors import ConfigError, RagpilotError
from core.settings import load_settings

MAX_TURNS = 10_000  # a session bound; Ctrl-D or /exit end it long before

STEP_LABELS = {
    "start_turn": "starting",
    "contextualize": "reading the conversation",
    "route_question": "choosing a route",
    "transform_query": "rewriting the query",
    "retrieve": "searching",
    "grade_retrieval": "grading passages",
    "refine_passages": "keeping relevant sentences",
    "web_search": "searching the web",
    "expand_context": "expanding context",
    "check_answerable": "checking the passages hold the answer",
    "generate_answer": "writing",
    "regenerate_answer": "rewriting",
    "check_support": "checking support",
}


def new_thread_id() -> str:
    return "chat-" + uuid.uuid4().hex[:12]


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def print_sources(console: Console, answer: Any) -> None:
    if not answer.citations:
        return
    console.print("[bold]Sources[/]")
    for citation in answer.citations:
        where = citation.url or citation.source
        page = f" p.{citation.page}" if citation.page else ""
        title = f"{citation.title} — " if citation.title and citation.title != where else ""
        console.print(f"  [{citation.n}] {escape(title + where + page)}", highlight=False)


def answer_turn(agent: Any, console: Console, question: str, thread_id: str, groups: list[str] | None) -> Any:
    """Run one turn: show steps while working, stream tokens, then the checked answer and its sources."""
    from agent.run_loop import FinalAnswer, StepUpdate, TokenDelta, stream_answer

    streamed: list[str] = []
    attempt = 0
    status = console.status("thinking…") if console.is_terminal else None
    if status is not None:
        status.start()
    try:
        for event in stream_answer(agent, question, thread_id=thread_id, groups=groups):
            if isinstance(event, StepUpdate):
                label = STEP_LABELS.get(event.step.node, event.step.node)
                if status is not None:
                    status.update(f"{label}…")
                elif not streamed:
                    console.print(f"[dim]· {escape(event.step.node)}[/]", highlight=False)
            elif isinstance(event, TokenDelta):
                if status is not None:
                    status.stop()
                if event.attempt != attempt:
                    if attempt:
                        console.print("\n[yellow](rewriting the answer after a support check)[/]")
                        streamed.clear()
                    attempt = event.attempt
                streamed.append(event.text)
                console.out(event.text, end="", highlight=False)
                console.file.flush()
            elif isinstance(event, FinalAnswer):
                answer = event.answer
    finally:
        if status is not None:
            status.stop()
    if streamed:
        console.out("")
    if not _same_text("".join(streamed), answer.answer):
        if streamed:
            console.print("[yellow]checked answer:[/]")
        console.out(answer.answer, highlight=False)
    if answer.short_answer:
        console.print(f"[bold]→ {escape(answer.short_answer)}[/]", highlight=False)
    print_sources(console, answer)
    return answer


def run_chat(
    agent: Any,
    console: Console,
    read_line: Callable[[str], str],
    thread_id: str,
    groups: list[str] | None = None,
) -> None:
    """The chat loop over ``read_line`` (``input`` on a terminal); ends on /exit or end of input."""
    from agent.threads import ThreadStore

    console.print(f"[dim]thread {thread_id} · /new /threads /exit[/]")
    threads = ThreadStore(agent.graph.checkpointer, keep_checkpoints=agent.settings.chat.keep_checkpoints)
    for _ in range(MAX_TURNS):
        try:
            line = read_line("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not line:
            continue
        if line in ("/exit", "/quit"):
            return
        if line == "/new":
            thread_id = new_thread_id()
            console.print(f"[dim]new thread {thread_id}[/]")
            continue
        if line == "/threads":
            for summary in threads.list_threads():
                marker = "*" if summary.thread_id == thread_id else " "
                console.print(
                    f"{marker} {summary.thread_id}  {summary.updated_at:%Y-%m-%d %H:%M}  {summary.turns} turns  "
                    f"{escape((summary.first_question or '')[:60])}",
                    highlight=False,
                )
            continue
        if line.startswith("/"):
            console.print("[red]unknown command[/] (/new /threads /exit)")
            continue
        try:
            answer_turn(agent, console, line, thread_id, groups)
        except RagpilotError as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}")


@app.command("chat")
def chat_command(
    thread: Annotated[
        str | None, typer.Option("--thread", help="continue this thread (default: a new one)")
    ] = None,
    groups: Annotated[
        list[str] | None, typer.Option("--group", help="ask as these ACL groups (repeatable)")
    ] = None,
) -> None:
    """Chat with your documents: answers stream as they are written, with numbered sources."""
    from agent.agent import Agent

    console = Console(highlight=False)
    try:
        settings = load_settings(**({"user_groups": groups} if groups else {}))
        agent = Agent(settings)
    except ConfigError as exc:
        fail(str(exc), 2)
    run_chat(
        agent, console, input if not console.is_terminal else console.input, thread or new_thread_id(), groups
    )
