"""``ragpilot trace [RUN_ID] [--html FILE] [--json]``: replay a stored run, or write its HTML page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from agent.cli.app import app, fail
from core.errors import ConfigError
from core.settings import load_settings

LIST_LIMIT = 20


@app.command("trace")
def trace_command(
    run_id: Annotated[
        str | None,
        typer.Argument(help="a run id (printed by ask/chat, and in --json answers); 'last' = the newest run"),
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="write a self-contained HTML page of the run to this file")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the stored run as one JSON object")] = False,
) -> None:
    """Replay a stored run as a tree of its steps; without RUN_ID, list the latest runs."""
    from rich.console import Console

    from agent.tracing.html_page import write_html
    from agent.tracing.store import TraceError, TraceStore
    from agent.tracing.tree import print_tree

    try:
        store = TraceStore(load_settings().traces_dir)
    except ConfigError as exc:
        fail(str(exc))
    if run_id is None:
        for stored_id in store.list_run_ids(limit=LIST_LIMIT):
            try:
                trace = store.load(stored_id)
            except TraceError as exc:
                typer.echo(f"{stored_id}  (unreadable: {exc})")
                continue
            typer.echo(
                f"{stored_id}  {trace.started_at:%Y-%m-%d %H:%M:%S}  {len(trace.steps):>2} steps  "
                f"{trace.total_ms:>8.0f} ms  {trace.question[:70]}"
            )
        return
    if run_id == "last":
        newest = store.list_run_ids(limit=1)
        if not newest:
            fail(f"no stored runs in {store.traces_dir}")
        run_id = newest[0]
    try:
        trace = store.load(run_id)
    except TraceError as exc:
        fail(str(exc))
    if html is not None:
        written = write_html(trace, html)
        typer.echo(f"wrote {written}")
    elif as_json:
        typer.echo(json.dumps(trace.model_dump(mode="json"), ensure_ascii=False))
    else:
        print_tree(trace, Console())
