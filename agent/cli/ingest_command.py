"""``ragpilot ingest PATH...``: index files and directories, incrementally, and report what happened.

Exit codes: 0 when the run completed (even if some files were skipped), 1 when nothing could be
ingested (or the run was interrupted), 2 for a configuration problem (invalid settings, an index built
with another embedder, an index locked by another process, an unreachable Qdrant server).
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from agent.cli.app import app, fail
from core.errors import ConfigError, ProviderUnavailable
from core.settings import ChunkingSettings, Settings, load_settings

if TYPE_CHECKING:  # the pipeline imports the models; the CLI loads it only when the command runs
    from tools.knowledge_base.ingest import IngestReport


class ChunkerOption(StrEnum):
    recursive = "recursive"
    sentence_window = "sentence_window"
    hierarchical = "hierarchical"


def settings_with_chunking(settings: Settings, chunker: str | None, chunk_tokens: int | None) -> Settings:
    """``settings`` with the CLI's chunking overrides, validated (ConfigError naming the field)."""
    overrides = {k: v for k, v in {"method": chunker, "chunk_tokens": chunk_tokens}.items() if v is not None}
    if not overrides:
        return settings
    try:
        chunking = ChunkingSettings.model_validate({**settings.chunking.model_dump(), **overrides})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(['chunking', *map(str, e['loc'])])}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"invalid settings: {problems}") from exc
    return settings.model_copy(update={"chunking": chunking})


@app.command("ingest")
def ingest_command(
    paths: Annotated[list[Path], typer.Argument(help="files and directories (recursed) to index")],
    prune: Annotated[
        bool,
        typer.Option(
            "--prune", help="remove documents whose files are gone, and records a file no longer has"
        ),
    ] = False,
    acl: Annotated[
        list[str] | None,
        typer.Option(
            "--acl", help="ACL group allowed to read these documents (repeatable; default: sidecar or public)"
        ),
    ] = None,
    chunker: Annotated[
        ChunkerOption | None, typer.Option("--chunker", help="default: chunking.method setting")
    ] = None,
    chunk_tokens: Annotated[
        int | None,
        typer.Option("--chunk-tokens", help="target chunk size in tokens (default: chunking.chunk_tokens)"),
    ] = None,
    optimize: Annotated[
        bool, typer.Option("--optimize", help="build the vector index afterwards (minutes for 100k+ chunks)")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as one JSON object")] = False,
    progress: Annotated[
        bool | None,
        typer.Option("--progress/--no-progress", help="progress bar on stderr (default: if a terminal)"),
    ] = None,
) -> None:
    """Index documents into the knowledge base: only new and changed files are embedded."""
    from tools.knowledge_base.ingest import ingest
    from tools.knowledge_base.knowledge_base import KnowledgeBase

    try:
        settings = settings_with_chunking(load_settings(), chunker.value if chunker else None, chunk_tokens)
        kb = KnowledgeBase.open(settings)
    except (ConfigError, ProviderUnavailable) as exc:
        fail(str(exc), 2)
    optimized = None
    try:
        show_progress = sys.stderr.isatty() if progress is None else progress
        report = ingest(paths, settings, prune=prune, acl=acl, progress=show_progress, kb=kb)
        if optimize and not report.interrupted:
            optimized = kb.store.optimize()
    except (ConfigError, ProviderUnavailable) as exc:
        fail(str(exc), 2)
    finally:
        kb.close()

    if as_json:
        payload = report.model_dump(mode="json")
        payload["optimized"] = optimized
        typer.echo(json.dumps(payload, ensure_ascii=False))
    else:
        print_report(report, optimized)
    if report.interrupted or not report.completed_anything:
        raise typer.Exit(1)


def print_report(report: IngestReport, optimized: bool | None) -> None:
    """The report as a table on stdout, then one line per skipped input and warning."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="ingest report", show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for label, value in (
        ("added", report.added),
        ("updated", report.updated),
        ("unchanged", report.unchanged),
        ("skipped", len(report.skipped)),
        ("removed", report.removed),
        ("chunks written", report.chunks_written),
        ("texts embedded", report.embedded),
        ("seconds", f"{report.seconds:.1f}"),
    ):
        table.add_row(label, str(value))
    if report.recovered_points:
        table.add_row("recovered", f"{report.recovered_points} points of an interrupted run removed")
    if optimized is not None:
        table.add_row("optimized", "yes" if optimized else "already optimal")
    console.print(table)
    for item in report.skipped:
        # soft_wrap: a path and its reason stay on one line, whatever the terminal width
        console.print(f"[yellow]skipped[/] {item.source}: {item.reason}", highlight=False, soft_wrap=True)
    for warning in report.warnings:
        console.print(f"[dim]warning[/] {warning}", highlight=False, soft_wrap=True)
    if report.interrupted:
        console.print("[red]interrupted[/]: documents not reported above were left as they were")
