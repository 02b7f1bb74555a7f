"""``ragpilot mcp``: the knowledge base as an MCP server over stdio (``agent/mcp/server.py``).

An MCP client (a desktop assistant, an IDE agent) starts this command and talks to it over
stdin/stdout; the tools read with the groups of ``settings.user_groups``. ``ragpilot serve`` serves the
same tools over streamable HTTP at ``/mcp``, where the caller's API key decides the groups.
"""

from __future__ import annotations

import logging
import sys

from agent.cli.app import app, fail
from core.errors import ConfigError
from core.settings import load_settings


@app.command("mcp")
def mcp_command() -> None:
    """Serve search_knowledge_base, ask and read_neighbourhood to an MCP client over stdio."""
    from agent.mcp.server import build_mcp_server, caller_from_settings
    from agent.server.runs import AgentHolder

    try:
        settings = load_settings()
    except ConfigError as exc:
        fail(str(exc), 2)
    # stdout carries the protocol: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, force=True)
    holder = AgentHolder(settings, None)
    build_mcp_server(holder, caller_from_settings(settings)).run("stdio")
