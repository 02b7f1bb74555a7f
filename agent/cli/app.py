"""The ``ragpilot`` command-line app. Each command lives in its own module and registers itself here."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="ragpilot",
    help="Agentic RAG over your documents: ingest, search, ask, chat, serve, trace, eval. Offline by default.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
