"""``ragpilot doctor``: versions, CPU, native builds, model files, data directory, providers; smoke tests."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.app import app, fail
from agent.doctor import diagnose, format_report
from core.errors import ConfigError
from core.settings import load_settings


@app.command("doctor")
def doctor_command(
    as_json: Annotated[bool, typer.Option("--json", help="print the report as one JSON object")] = False,
    smoke_test: Annotated[
        bool, typer.Option("--smoke-test/--no-smoke-test", help="decode one token and embed one query")
    ] = True,
) -> None:
    """Print what a person debugging an install needs; exit 1 when a check fails."""
    try:
        settings = load_settings()
    except ConfigError as exc:
        fail(str(exc), 2)
    report = diagnose(settings, smoke_test=smoke_test)
    typer.echo(report.model_dump_json() if as_json else format_report(report))
    raise typer.Exit(0 if report.ok else 1)
