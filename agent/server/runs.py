"""What every HTTP surface shares: the one agent and its run lock, the bounded run queue, streamed runs
detached from their response, thread ids scoped to their owner, and ragpilot's errors as HTTP statuses.

One agent serves every request; its local models and embedded index are used one run at a time (a
lock), since neither the llama.cpp model nor the embedded Qdrant shard is safe to share mid-call. Runs
wait in a bounded queue (``server.max_queued_runs``); beyond it a request gets 503 with ``Retry-After``
at once instead of hanging. A streamed run belongs to a worker thread, not to the response: when the
client goes away, the worker stops after the step in progress and releases the lock, so one dropped
connection never blocks the others.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Annotated, Any

import anyio
from fastapi import Depends, HTTPException, Request, status

from agent.server.identity import Caller, resolve_caller
from agent.threads import ThreadError, ThreadStore
from core.errors import ConfigError, FilterError, IngestError, ProviderUnavailable, RagpilotError
from core.settings import Settings

THREAD_SEPARATOR = "--"

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


def current_holder(request: Request) -> AgentHolder:
    """The agent of the app serving the request."""
    holder: AgentHolder = request.app.state.holder
    return holder


CallerDep = Annotated[Caller, Depends(current_caller)]
HolderDep = Annotated[AgentHolder, Depends(current_holder)]


def stored_thread_id(caller: Caller, thread_id: str) -> str:
    """The checkpointer's id of a caller's thread (callers only ever see their own ``thread_id``)."""
    return f"{caller.owner}{THREAD_SEPARATOR}{thread_id}"


def busy_error() -> HTTPException:
    return HTTPException(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        "every run slot is taken (server.max_queued_runs); try again shortly",
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def http_error(exc: RagpilotError) -> HTTPException:
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
