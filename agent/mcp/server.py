"""ragpilot as an MCP server (the official ``mcp`` SDK): desktop assistants, IDE agents and other agent
frameworks use a ragpilot knowledge base as tools.

Tools:
- ``search_knowledge_base``: hybrid search (dense + BM25, filters), passages with their chunk ids;
- ``ask``: a cited answer through the whole agent graph, with its route and trace (run) id;
- ``read_neighbourhood``: a passage with the text around it (neighbouring chunks, parent section,
  linked table rows).

Identity never comes from tool arguments: over stdio the caller is the process's own user
(``settings.user_groups``); over streamable HTTP it is the request's API key, mapped to groups exactly
as on ``/ask`` (``agent/server/identity.py``). Arguments are validated by the same pydantic models as
ragpilot's LangChain tools; an argument a tool does not define (``groups``...) is ignored, never read.
Runs share the server's one agent and run lock (``AgentHolder``), in a worker thread so the event loop
stays free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from pydantic import BaseModel, Field
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agent.run_loop import run_to_answer
from agent.server.identity import Caller, CallerRejected, identify, presented_key
from agent.server.runs import AgentHolder, ServerBusy, stored_thread_id
from agent.server.schemas import THREAD_ID_PATTERN
from core.answer import Answer
from core.errors import RagpilotError
from core.settings import Settings
from core.vocabulary import RouteRequest
from tools.knowledge_base.records import Hit
from tools.langchain_tools import ExpandContextArgs, HybridSearchArgs, make_tools

INSTRUCTIONS = (
    "Search and ask a document knowledge base. Use ask for a short cited answer (it may say the "
    "sources do not hold it); use search_knowledge_base to read passages yourself, then "
    "read_neighbourhood for the text around one of them."
)
SNIPPET_CHARS = 1200
MCP_PATH = "/mcp"  # where ``ragpilot serve`` answers MCP over streamable HTTP

IdentifyCaller = Callable[[Context], Caller]


class Passage(BaseModel):
    """One passage of the knowledge base; ``chunk_id`` names it for ``read_neighbourhood``."""

    chunk_id: str
    doc_id: str
    title: str
    source: str
    page: int | None = None
    score: float
    text: str

    @classmethod
    def from_hit(cls, hit: Hit) -> Passage:
        text = hit.text if len(hit.text) <= SNIPPET_CHARS else hit.text[:SNIPPET_CHARS] + "…"
        page = hit.chunk.page_start if hit.chunk is not None else None
        return cls(
            chunk_id=hit.chunk_id, doc_id=hit.doc_id, title=hit.title, source=hit.url or hit.source,
            page=page, score=round(float(hit.rerank_score if hit.rerank_score is not None else hit.score), 4),
            text=text,
        )  # fmt: skip


class Passages(BaseModel):
    passages: list[Passage]


def _described(model: type[BaseModel], field: str) -> str:
    return model.model_fields[field].description or ""


def caller_from_settings(settings: Settings) -> IdentifyCaller:
    """Over stdio: the caller is the local user, reading as ``settings.user_groups``."""
    caller = Caller(owner="local", groups=list(settings.user_groups))
    return lambda ctx: caller


def caller_from_http_headers(settings: Settings) -> IdentifyCaller:
    """Over HTTP: the request's API key (``require_api_key`` has already refused a bad one)."""

    def identify_request(ctx: Context) -> Caller:
        return identify(presented_key(ctx.headers or {}), settings)

    return identify_request


class RequireApiKey:
    """The MCP HTTP app behind the server's identity check: a request with a malformed or unknown key
    (or none, where keys are required) gets 401 before MCP reads it."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            try:
                identify(presented_key(headers), self.settings)
            except CallerRejected as exc:
                response = JSONResponse({"detail": str(exc)}, 401, headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_endpoint(mcp: MCPServer, settings: Settings) -> ASGIApp:
    """The ASGI endpoint serving ``mcp`` over streamable HTTP behind the API-key check; its session
    manager must run for the life of the server (``mcp.session_manager.run()`` in the app's lifespan).

    Stateless: each MCP request stands alone, so any replica can serve it (docs/deployment.md).
    """
    mcp.streamable_http_app(streamable_http_path=MCP_PATH, stateless_http=True, host=settings.server.host)
    return RequireApiKey(StreamableHTTPASGIApp(mcp.session_manager), settings)


def build_mcp_server(holder: AgentHolder, identify_caller: IdentifyCaller, *, version: str = "") -> MCPServer:
    """The MCP server over ``holder``'s agent; ``identify_caller`` says whose groups a call reads with."""
    # log_level: the SDK configures logging with it; ragpilot's own server keeps its quieter default.
    mcp = MCPServer("ragpilot", instructions=INSTRUCTIONS, version=version, log_level="WARNING")
    settings = holder.settings

    tools: dict[str, Any] = {}  # ragpilot's retrieval tools, built once over the agent's knowledge base

    def langchain_tool(name: str) -> Any:
        if not tools:
            tools.update({t.name: t for t in make_tools(holder.get().resources.knowledge_base, settings)})
        return tools[name]

    @contextmanager
    def run_slot() -> Iterator[None]:
        try:
            with holder.run_slot():
                yield
        except ServerBusy:
            raise ToolError("every run slot is taken (server.max_queued_runs); try again shortly") from None

    def call_tool_as(caller: Caller, name: str, arguments: dict[str, Any]) -> list[Hit]:
        config = {"configurable": {"user_groups": caller.groups}}
        with run_slot():
            message = langchain_tool(name).invoke(
                {"args": arguments, "name": name, "type": "tool_call", "id": name}, config=config
            )
        if getattr(message, "status", "success") == "error":  # bad input (a filter): the caller's to fix
            raise ToolError(str(message.content))
        return list(message.artifact or [])

    @mcp.tool()
    async def search_knowledge_base(
        ctx: Context,
        query: Annotated[str, Field(min_length=1, description=_described(HybridSearchArgs, "query"))],
        filter: Annotated[
            dict[str, Any] | None, Field(description=_described(HybridSearchArgs, "filter"))
        ] = None,
        top_k: Annotated[int, Field(ge=1, le=50, description=_described(HybridSearchArgs, "top_k"))] = 8,
        mode: Annotated[
            str | None,
            Field(description=_described(HybridSearchArgs, "mode"), pattern="^(dense|sparse|hybrid)$"),
        ] = None,
    ) -> Passages:
        """Search the knowledge base (dense + BM25 fused, metadata filters). Returns passages, best first."""
        caller = identify_caller(ctx)
        arguments = HybridSearchArgs.model_validate(
            {"query": query, "filter": filter, "top_k": top_k, "mode": mode}
        ).model_dump(exclude_none=True)
        hits = await anyio.to_thread.run_sync(call_tool_as, caller, "hybrid_search", arguments)
        return Passages(passages=[Passage.from_hit(h) for h in hits])

    @mcp.tool()
    async def read_neighbourhood(
        ctx: Context,
        chunk_id: Annotated[str, Field(min_length=1, description="a chunk id from search_knowledge_base")],
    ) -> Passages:
        """A passage with the text around it: neighbouring chunks, its parent section, linked table rows."""
        caller = identify_caller(ctx)
        arguments = ExpandContextArgs.model_validate({"chunk_ids": [chunk_id]}).model_dump()
        hits = await anyio.to_thread.run_sync(call_tool_as, caller, "expand_context", arguments)
        return Passages(passages=[Passage.from_hit(h) for h in hits])

    @mcp.tool()
    async def ask(
        ctx: Context,
        question: Annotated[str, Field(min_length=1, max_length=4000, description="the question")],
        route: Annotated[
            RouteRequest, Field(description="auto (classifier), direct, single or iterative (multi-hop)")
        ] = "auto",
        thread_id: Annotated[
            str | None,
            Field(pattern=THREAD_ID_PATTERN, description="continue this conversation (a follow-up question)"),
        ] = None,
    ) -> Answer:
        """Answer from the knowledge base with numbered citations, or say the sources do not hold it.
        The result names its route and its run id (``ragpilot trace <run_id>`` replays it)."""
        caller = identify_caller(ctx)

        def run() -> Answer:
            try:
                agent_ = holder.get()
                with run_slot():
                    answer = run_to_answer(
                        agent_, question, thread_id=stored_thread_id(caller, thread_id) if thread_id else None,
                        groups=caller.groups, route=route, budget=settings.graph.budget,
                    )  # fmt: skip
            except RagpilotError as exc:  # a provider down, a bad setting: said, not a crash
                raise ToolError(str(exc)) from exc
            return answer.model_copy(update={"thread_id": thread_id})

        return await anyio.to_thread.run_sync(run)

    return mcp
