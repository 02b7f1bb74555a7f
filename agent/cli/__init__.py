"""``ragpilot`` CLI: importing this package registers every command on ``app``."""

# Command modules register themselves on `app` when imported (one module per command).
from agent.cli import (  # noqa: E402,F401  (imported for their registration side effect)
    ask_command,
    chat_command,
    doctor_command,
    eval_command,
    ingest_command,
    mcp_command,
    search_command,
    serve_command,
    threads_command,
    trace_command,
)
from agent.cli.app import app

__all__ = ["app"]
