"""The HTTP server (FastAPI), composed of one router per surface:

- ``routes_ask``: ``POST /ask``, ``POST /ask/stream`` (ragpilot's own API, SSE steps and tokens);
- ``routes_threads``: ``GET`` / ``DELETE /threads/{id}``;
- ``routes_ingest``: ``POST /ingest``;
- ``openai_api``: ``POST /v1/chat/completions``, ``GET /v1/models`` (OpenAI-compatible);
- ``agent/mcp``: the MCP server over streamable HTTP at ``/mcp``;
- ``GET /healthz`` here.

Identity: the caller's ACL groups come from its API key (``Authorization: Bearer KEY`` or
``X-API-Key``) mapped by ``settings.server.api_keys``; see ``agent/server/identity.py``. Threads are
scoped to the caller: a thread id is stored as ``<owner>--<id>``, so one key can never read or continue
another key's conversation. Every surface runs its turns through the one run loop and the one agent
(``agent/server/runs.py``: the run lock and the bounded queue).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route

from agent.mcp.server import MCP_PATH, build_mcp_server, caller_from_http_headers, http_endpoint
from agent.server import openai_api, routes_ask, routes_ingest, routes_threads
from agent.server.runs import AgentHolder
from agent.server.schemas import HealthOut
from core.settings import Settings


def _package_version() -> str:
    try:
        return version("ragpilot")
    except PackageNotFoundError:
        return "0+unknown"


def create_app(settings: Settings, agent: Any | None = None) -> FastAPI:
    """The server for ``settings``; pass ``agent`` to serve an existing ``Agent`` (else built on first use)."""
    holder = AgentHolder(settings, agent)
    mcp = build_mcp_server(holder, caller_from_http_headers(settings), version=_package_version())
    mcp_endpoint = http_endpoint(mcp, settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp.session_manager.run():  # the MCP endpoint's sessions live as long as the server
            yield
        # Keep storage bounded between restarts: old threads go, the rest keep their latest checkpoints.
        if holder.loaded:
            with holder.run_lock:
                holder.threads().prune(settings.chat.retention_days)

    app = FastAPI(
        title="ragpilot",
        version=_package_version(),
        summary="Agentic RAG over your documents: cited answers, threads, streaming; OpenAI-compatible; MCP.",
        lifespan=lifespan,
    )
    app.state.holder = holder
    app.state.settings = settings

    @app.get("/healthz", response_model=HealthOut)
    def healthz() -> HealthOut:
        """Liveness: answers without loading any model."""
        return HealthOut(
            version=_package_version(),
            llm=settings.llm.provider,
            embedder=settings.embedder.provider,
            agent_loaded=holder.loaded,
        )

    for router in (routes_ask.router, routes_threads.router, routes_ingest.router, openai_api.router):
        app.include_router(router)
    openai_api.install_openai_errors(app)
    # A route, not a mount: the endpoint is exactly /mcp (a mount would redirect it to /mcp/).
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp_endpoint, methods=["GET", "POST", "DELETE"]))
    return app
