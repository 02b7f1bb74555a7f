"""The ``ragpilot`` command-line app. Each command lives in its own module and registers itself here."""

from __future__ import annotations

import faulthandler
import sys
from enum import StrEnum
from typing import NoReturn

import typer

from core.vocabulary import ROUTE_REQUESTS

#: ``--route`` choices, from the one route vocabulary.
RouteOption = StrEnum("RouteOption", [(route, route) for route in ROUTE_REQUESTS])  # type: ignore[misc]
AUTO_ROUTE = RouteOption("auto")


def fail(message: str, code: int = 2) -> NoReturn:
    """End a command with one line on stderr, ``error: <message>``, and exit code ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


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
