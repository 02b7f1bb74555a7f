"""``ragpilot serve [--host --port]``: the HTTP API (``agent/server/app.py``) under uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.app import app, fail
from core.errors import ConfigError
from core.settings import load_settings


@app.command("serve")
def serve_command(
    host: Annotated[str | None, typer.Option("--host", help="default: the server.host setting")] = None,
    port: Annotated[
        int | None, typer.Option("--port", min=1, max=65535, help="default: the server.port setting")
    ] = None,
    preload: Annotated[
        bool, typer.Option("--preload/--lazy", help="load the models before accepting requests")
    ] = False,
) -> None:
    """Serve POST /ask, POST /ask/stream (SSE), GET/DELETE /threads/{id}, POST /ingest, GET /healthz,
    the OpenAI-compatible POST /v1/chat/completions and GET /v1/models, and MCP at /mcp."""
    import uvicorn

    from agent.server.app import create_app

    try:
        settings = load_settings()
    except ConfigError as exc:
        fail(str(exc), 2)
    application = create_app(settings)
    if preload:
        application.state.holder.get()
    if not settings.server.api_keys:
        typer.echo(
            "no server.api_keys configured: every caller is anonymous and reads as group 'public'", err=True
        )
    uvicorn.run(
        application, host=host or settings.server.host, port=port or settings.server.port, log_level="info"
    )
