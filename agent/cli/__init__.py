"""``ragpilot`` CLI: importing this package registers every command on ``app``."""

from agent.cli.app import app

# Command modules register themselves on `app` when imported (one module per command).
from agent.cli import (  # noqa: E402,F401  (imported for their registration side effect)
    ingest_command,
)

__all__ = ["app"]
