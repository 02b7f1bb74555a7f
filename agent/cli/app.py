"""The ``ragpilot`` command-line app. Each command lives in its own module and registers itself here."""

from __future__ import annotations

import faulthandler
import sys

import typer

app = typer.Typer(
    name="ragpilot",
    help="Agentic RAG over your documents: ingest, search, ask, chat, serve, trace, eval. Offline by default.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


@app.callback()
def _on_every_command() -> None:
    # A native crash that still happens in-process then prints the Python stack it died in (llama.cpp's
    # decode, the embedder...) instead of a bare "Segmentation fault". The process's own stderr: a
    # captured sys.stderr (tests, an embedding app) has no file descriptor to write to from a signal.
    if sys.__stderr__ is not None and not faulthandler.is_enabled():
        faulthandler.enable(file=sys.__stderr__)
