"""``ragpilot threads list|show ID|delete ID|prune``: the chat threads kept by the checkpointer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from agent.cli.app import app, fail
from core.errors import ConfigError
from core.settings import load_settings

if TYPE_CHECKING:
    from agent.threads import ThreadStore

threads_app = typer.Typer(help="List, show, delete and prune chat threads.", no_args_is_help=True)
app.add_typer(threads_app, name="threads")


@contextmanager
def _open_store() -> Iterator[ThreadStore]:
    """The configured checkpointer as a ThreadStore; a bad setting exits with its message."""
    from agent.threads import ThreadStore

    with ExitStack() as stack:
        try:
            store = stack.enter_context(ThreadStore.open(load_settings()))
        except ConfigError as exc:
            fail(str(exc))
        yield store


@threads_app.command("list")
def list_threads(as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False) -> None:
    """Threads, most recently updated first: id, last update, turns, first question."""
    with _open_store() as store:
        summaries = store.list_threads()
    if as_json:
        typer.echo(
            json.dumps({"threads": [s.model_dump(mode="json") for s in summaries]}, ensure_ascii=False)
        )
        return
    if not summaries:
        typer.echo("no threads")
    for summary in summaries:
        question = (summary.first_question or "")[:70]
        typer.echo(
            f"{summary.thread_id}  {summary.updated_at:%Y-%m-%d %H:%M}  {summary.turns:>3} turns  {question}"
        )


@threads_app.command("show")
def show_thread(
    thread_id: Annotated[str, typer.Argument(help="the thread id")],
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """The thread's questions and answers, and the last answer's sources."""
    from agent.threads import ThreadError

    with _open_store() as store:
        try:
            detail = store.get_thread(thread_id)
        except ThreadError as exc:
            fail(str(exc), 1)
    if as_json:
        typer.echo(json.dumps(detail.model_dump(mode="json"), ensure_ascii=False))
        return
    typer.echo(
        f"thread {detail.thread_id} · updated {detail.updated_at:%Y-%m-%d %H:%M} · {len(detail.turns)} turns"
    )
    for number, turn in enumerate(detail.turns, start=1):
        typer.echo(f"\n[{number}] Q: {turn.question}")
        typer.echo(f"    A: {turn.answer or '(no answer)'}")
    if detail.last_citations:
        typer.echo("\nsources of the last answer:")
        for citation in detail.last_citations:
            where = citation.get("title") or citation.get("source") or citation.get("url") or ""
            typer.echo(f"  [{citation.get('n')}] {where}")


@threads_app.command("delete")
def delete_thread(thread_id: Annotated[str, typer.Argument(help="the thread id")]) -> None:
    """Delete a thread and all its checkpoints."""
    from agent.threads import ThreadError

    with _open_store() as store:
        try:
            store.delete_thread(thread_id)
            store.reclaim_space()
        except ThreadError as exc:
            fail(str(exc), 1)
    typer.echo(f"deleted thread {thread_id}")


@threads_app.command("prune")
def prune_threads(
    retention_days: Annotated[
        float | None,
        typer.Option("--retention-days", min=0.0, help="default: the chat.retention_days setting"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """Delete threads untouched for the retention period; keep only the latest checkpoints of the rest."""
    from agent.threads import ThreadError

    with _open_store() as store:
        days = retention_days if retention_days is not None else load_settings().chat.retention_days
        try:
            report = store.prune(days)
        except ThreadError as exc:
            fail(str(exc))
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json")))
        return
    typer.echo(
        f"deleted {len(report.threads_deleted)} threads; kept {report.threads_compacted}, "
        f"removing {report.checkpoints_deleted} older checkpoints"
    )
