"""The HTTP API (FastAPI): ask, ask with server-sent events, threads, ingest, health.

Identity: the caller's ACL groups come from its API key (``Authorization: Bearer KEY`` or
``X-API-Key``) mapped by ``settings.server.api_keys``; see ``agent/server/identity.py``. Threads are
scoped to the caller: a thread id is stored as ``<owner>--<id>``, so one key can never read or
continue another key's conversation (which holds passages only that key's groups may see).

One agent serves every request; its local models and embedded index are used one run at a time
(a lock), since neither the llama.cpp model nor the embedded Qdrant shard is safe to share mid-call.
Runs wait in a bounded queue (``server.max_queued_runs``); beyond it a request gets 503 with
``Retry-After`` at once instead of hanging. A streamed run belongs to a worker thread, not to the
response: when the client goes away, the worker stops after the step in progress and releases the
lock, so one dropped connection never blocks the others.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any

import anyio
from fastapi import Depends, FastAPI, File, Form, HTTPException, Request, UploadFile, status
from fastapi.responses import JSONResponse, Response
from sse_starlette.sse import EventSourceResponse

from agent.run_loop import StepUpdate, TokenDelta, run_to_answer, stream_answer
from agent.server.identity import Caller, resolve_caller
from agent.server.schemas import (
    THREAD_ID_PATTERN,
    AskRequest,
    HealthOut,
    IngestedFile,
    IngestOut,
    ThreadOut,
    ThreadTurnOut,
)
from agent.threads import ThreadError, ThreadStore
from core.answer import Answer
from core.errors import ConfigError, FilterError, IngestError, ProviderUnavailable, RagpilotError
from core.settings import Settings

logger = logging.getLogger(__name__)

THREAD_SEPARATOR = "--"
_SAFE_FILENAME = re.compile(r"[^A-Za-z0-9._\-\u4e00-\u9fff]+")


def _package_version() -> str:
    try:
        return version("ragpilot")
    except PackageNotFoundError:
        return "0+unknown"


RETRY_AFTER_S = 5


class ServerBusy(Exception):
    """The run queue is full."""


class AgentHolder:
    """The one agent of this server, built on first use, and the lock that serialises its runs."""

    def __init__(self, settings: Settings, agent: Any | None) -> None:
        self.settings = settings
        self._agent = agent
        self._build_lock = threading.Lock()
        self.run_lock = threading.Lock()
        # The run in progress plus those allowed to wait for it.
        self._slots = threading.BoundedSemaphore(settings.server.max_queued_runs + 1)

    @contextmanager
    def run_slot(self) -> Iterator[None]:
        """Hold the run lock for one run; ServerBusy at once when the queue is already full."""
        if not self._slots.acquire(blocking=False):
            raise ServerBusy
        try:
            with self.run_lock:
                yield
        finally:
            self._slots.release()

    @property
    def loaded(self) -> bool:
        return self._agent is not None

    def get(self) -> Any:
        with self._build_lock:
            if self._agent is None:
                from agent.agent import Agent

                self._agent = Agent(self.settings)
            return self._agent

    def threads(self) -> ThreadStore:
        return ThreadStore(
            self.get().graph.checkpointer, keep_checkpoints=self.settings.chat.keep_checkpoints
        )


def current_caller(request: Request) -> Caller:
    """The request's caller, resolved against the settings of the app serving it."""
    return resolve_caller(request, request.app.state.settings)


CallerDep = Annotated[Caller, Depends(current_caller)]


def stored_thread_id(caller: Caller, thread_id: str) -> str:
    """The checkpointer's id of a caller's thread (callers only ever see their own ``thread_id``)."""
    return f"{caller.owner}{THREAD_SEPARATOR}{thread_id}"


def _public_answer(answer: Answer, public_thread_id: str) -> dict[str, Any]:
    return answer.model_dump(mode="json") | {"thread_id": public_thread_id}


def _busy() -> HTTPException:
    return HTTPException(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        "every run slot is taken (server.max_queued_runs); try again shortly",
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def _http_error(exc: RagpilotError) -> HTTPException:
    """Bad input is the caller's (4xx); a missing model, setting or provider is the server's (5xx)."""
    if isinstance(exc, ThreadError):
        return HTTPException(status.HTTP_404_NOT_FOUND, str(exc))
    if isinstance(exc, IngestError | FilterError):
        return HTTPException(status.HTTP_400_BAD_REQUEST, str(exc))
    if isinstance(exc, ProviderUnavailable):
        return HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc))
    if isinstance(exc, ConfigError):
        return HTTPException(status.HTTP_500_INTERNAL_SERVER_ERROR, f"server configuration: {exc}")
    return HTTPException(status.HTTP_500_INTERNAL_SERVER_ERROR, str(exc))


def create_app(settings: Settings, agent: Any | None = None) -> FastAPI:
    """The API for ``settings``; pass ``agent`` to serve an existing ``Agent`` (else built on first use)."""
    holder = AgentHolder(settings, agent)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        # Keep storage bounded between restarts: old threads go, the rest keep their latest checkpoints.
        if holder.loaded:
            with holder.run_lock:
                holder.threads().prune(settings.chat.retention_days)

    app = FastAPI(
        title="ragpilot",
        version=_package_version(),
        summary="Agentic RAG over your documents: cited answers, threads, streaming.",
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

    @app.post("/ask")
    def ask(body: AskRequest, who: CallerDep) -> JSONResponse:
        """Answer one question (continuing ``thread_id`` when given); returns the ``Answer`` object."""
        public_id = body.thread_id or uuid.uuid4().hex
        try:
            agent_ = holder.get()
            with holder.run_slot():
                answer = run_to_answer(
                    agent_,
                    body.question,
                    thread_id=stored_thread_id(who, public_id),
                    groups=who.groups,
                    route=body.route,
                    budget=settings.graph.budget.tightened_by(body.budget),
                )
        except ServerBusy:
            raise _busy() from None
        except RagpilotError as exc:
            raise _http_error(exc) from exc
        return JSONResponse(_public_answer(answer, public_id))

    @app.post("/ask/stream")
    def ask_stream(body: AskRequest, who: CallerDep) -> EventSourceResponse:
        """Server-sent events: ``step`` (each node's event), ``token`` (answer text as it is written),
        then ``answer`` (the ``Answer`` object with citations); ``error`` if the run fails."""
        public_id = body.thread_id or uuid.uuid4().hex
        try:
            agent_ = holder.get()
        except RagpilotError as exc:
            raise _http_error(exc) from exc

        def run(emit: Callable[[dict[str, str]], bool]) -> None:
            """The run, in its worker thread; stops when ``emit`` reports that nobody is listening."""
            try:
                for event in stream_answer(
                    agent_,
                    body.question,
                    thread_id=stored_thread_id(who, public_id),
                    groups=who.groups,
                    route=body.route,
                    budget=settings.graph.budget.tightened_by(body.budget),
                ):
                    if isinstance(event, StepUpdate):
                        listening = emit({"event": "step", "data": event.step.model_dump_json()})
                    elif isinstance(event, TokenDelta):
                        payload = {"text": event.text, "attempt": event.attempt, "node": event.node}
                        listening = emit({"event": "token", "data": json.dumps(payload, ensure_ascii=False)})
                    else:
                        answer = _public_answer(event.answer, public_id)
                        listening = emit({"event": "answer", "data": json.dumps(answer, ensure_ascii=False)})
                    if not listening:
                        return  # leaving the loop closes the run's generator: the graph stops here
            except Exception as exc:  # the stream has started: report in-band, never drop silently
                if isinstance(exc, RagpilotError):
                    error = _http_error(exc)
                else:
                    logger.exception("run failed while streaming")
                    error = HTTPException(
                        status.HTTP_500_INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}"
                    )
                emit(
                    {
                        "event": "error",
                        "data": json.dumps({"status": error.status_code, "detail": error.detail}),
                    }
                )

        try:
            stream = DetachedRun(holder, run)
        except ServerBusy:
            raise _busy() from None
        return EventSourceResponse(stream.events(), ping=15)

    def _thread_id_or_422(thread_id: str) -> str:
        if not re.match(THREAD_ID_PATTERN, thread_id):
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT, "thread id: letters, digits, '-', '_' (1-64)"
            )
        return thread_id

    @app.get("/threads/{thread_id}", response_model=ThreadOut)
    def get_thread(thread_id: str, who: CallerDep) -> ThreadOut:
        """The caller's thread: its turns and the last answer's citations (404 if it has none)."""
        stored = stored_thread_id(who, _thread_id_or_422(thread_id))
        try:
            with holder.run_slot():
                detail = holder.threads().get_thread(stored)
        except ServerBusy:
            raise _busy() from None
        except ThreadError:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no thread {thread_id!r}") from None
        return ThreadOut(
            thread_id=thread_id,
            updated_at=detail.updated_at.isoformat(),
            turns=[ThreadTurnOut(question=t.question, answer=t.answer) for t in detail.turns],
            last_citations=detail.last_citations,
        )

    @app.delete("/threads/{thread_id}", status_code=status.HTTP_204_NO_CONTENT)
    def delete_thread(thread_id: str, who: CallerDep) -> Response:
        """Delete the caller's thread (404 if it has none)."""
        stored = stored_thread_id(who, _thread_id_or_422(thread_id))
        try:
            with holder.run_slot():
                holder.threads().delete_thread(stored)
        except ServerBusy:
            raise _busy() from None
        except ThreadError:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no thread {thread_id!r}") from None
        return Response(status_code=status.HTTP_204_NO_CONTENT)

    @app.post("/ingest", response_model=IngestOut)
    def ingest_files(
        who: CallerDep,
        files: Annotated[list[UploadFile], File(description="documents to index (any supported format)")],
        acl: Annotated[
            str | None,
            Form(description="comma-separated groups allowed to read these files; default: all the caller's"),
        ] = None,
    ) -> IngestOut:
        """Index uploaded files, readable by the caller's groups (or the subset named in ``acl``).

        Files are kept under ``<home>/uploads/<owner>/``; uploading a file of the same name again
        replaces its previous version in the index.
        """
        from tools.knowledge_base.ingest import ingest
        from tools.knowledge_base.loaders.factory import is_supported

        groups = _ingest_acl(who, acl)
        upload_dir = settings.home / "uploads" / who.owner
        upload_dir.mkdir(parents=True, exist_ok=True)
        saved: dict[str, Path] = {}  # one entry per distinct file name
        results: list[IngestedFile] = []
        limit = int(settings.ingest.max_file_mb * 1024 * 1024)
        for upload in files:
            name = _safe_filename(upload.filename or "upload")
            path = upload_dir / name
            if not is_supported(path):
                results.append(IngestedFile(filename=name, status="failed", error="unsupported file type"))
                continue
            data = upload.file.read(limit + 1)
            if len(data) > limit:
                results.append(
                    IngestedFile(
                        filename=name,
                        status="failed",
                        error=f"larger than ingest.max_file_mb={settings.ingest.max_file_mb}",
                    )
                )
                continue
            path.write_bytes(data)
            saved[path.absolute().as_posix()] = path
        if saved:
            try:
                knowledge_base = holder.get().resources.knowledge_base
                with holder.run_slot():
                    # One run per file, so each file gets its own status.
                    for path in saved.values():
                        report = ingest([path], settings, acl=groups, progress=False, kb=knowledge_base)
                        results.append(_file_result(path.name, report))
            except ServerBusy:
                raise _busy() from None
            except RagpilotError as exc:
                raise _http_error(exc) from exc
        return IngestOut(acl=groups, files=results)

    return app


class DetachedRun:
    """A streamed run in a worker thread that holds a run slot; the response only reads its events.

    Events pass through a small queue. When the client disconnects, the response's generator is
    closed, ``listening`` turns False, and the worker stops at its next event: the slot and the run
    lock are released however the client leaves.
    """

    _DONE: dict[str, str] = {}

    def __init__(self, holder: AgentHolder, run: Callable[[Callable[[dict[str, str]], bool]], None]) -> None:
        self._events: queue.Queue[dict[str, str]] = queue.Queue(maxsize=64)
        self._listening = threading.Event()
        self._listening.set()
        held = ExitStack()
        held.enter_context(holder.run_slot())  # ServerBusy here reaches the caller as 503, before any byte

        def work() -> None:
            with held:  # the slot passes to the worker and is released when it ends
                run(self._put)
            self._put(self._DONE)

        threading.Thread(target=work, name="ragpilot-stream", daemon=True).start()

    def _put(self, item: dict[str, str]) -> bool:
        while self._listening.is_set():
            try:
                self._events.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def _next_event(self) -> dict[str, str] | None:
        # A bounded wait, so a cancelled reader never leaves a thread blocked here.
        try:
            return self._events.get(timeout=1.0)
        except queue.Empty:
            return None

    async def events(self) -> AsyncIterator[dict[str, str]]:
        try:
            while True:
                item = await anyio.to_thread.run_sync(self._next_event)
                if item is self._DONE:
                    return
                if item is not None:
                    yield item
        finally:
            self._listening.clear()  # the client left (or the run ended): the worker stops


def _file_result(name: str, report: Any) -> IngestedFile:
    if report.skipped:
        return IngestedFile(filename=name, status="failed", error=report.skipped[0].reason)
    if report.added or report.updated:
        return IngestedFile(filename=name, status="ingested", chunks=report.chunks_written)
    return IngestedFile(filename=name, status="unchanged")


def _safe_filename(name: str) -> str:
    """The upload's base name with anything but letters, digits, CJK, '.', '-', '_' replaced."""
    base = Path(name.replace("\\", "/")).name.strip() or "upload"
    cleaned = _SAFE_FILENAME.sub("_", base).lstrip(".")
    return cleaned[:128] or "upload"


def _ingest_acl(who: Caller, acl: str | None) -> list[str]:
    """The groups a caller's upload is readable by: its own, or a subset of them (never wider)."""
    if acl is None:
        return list(who.groups)
    wanted = [g.strip() for g in acl.split(",") if g.strip()]
    if not wanted:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"acl names no group ({acl!r}): name one or more of the caller's groups, or leave it out",
        )
    foreign = [g for g in wanted if g not in who.groups]
    if foreign:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, f"acl names groups the caller is not in: {', '.join(foreign)}"
        )
    return wanted
