"""``POST /ask`` (one answer) and ``POST /ask/stream`` (server-sent events: steps, tokens, answer)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, HTTPException, status
from fastapi.responses import JSONResponse
from sse_starlette.sse import EventSourceResponse

from agent.run_loop import StepUpdate, TokenDelta, run_to_answer, stream_answer
from agent.server.identity import Caller
from agent.server.runs import (
    AgentHolder,
    CallerDep,
    DetachedRun,
    HolderDep,
    ServerBusy,
    busy_error,
    http_error,
    stored_thread_id,
)
from agent.server.schemas import AskRequest
from core.answer import Answer
from core.errors import RagpilotError

logger = logging.getLogger(__name__)

router = APIRouter(tags=["ask"])


def public_answer(answer: Answer, public_thread_id: str) -> dict[str, Any]:
    return answer.model_dump(mode="json") | {"thread_id": public_thread_id}


def run_options(body: AskRequest, who: Caller, holder: AgentHolder, public_id: str) -> dict[str, Any]:
    """The run loop's options for one request: the caller's thread and groups, the request's route, and
    its budget capped by the server's."""
    return {
        "thread_id": stored_thread_id(who, public_id),
        "groups": who.groups,
        "route": body.route,
        "budget": holder.settings.graph.budget.tightened_by(body.budget),
    }


@router.post("/ask")
def ask(body: AskRequest, who: CallerDep, holder: HolderDep) -> JSONResponse:
    """Answer one question (continuing ``thread_id`` when given); returns the ``Answer`` object."""
    public_id = body.thread_id or uuid.uuid4().hex
    try:
        agent_ = holder.get()
        with holder.run_slot():
            answer = run_to_answer(agent_, body.question, **run_options(body, who, holder, public_id))
    except ServerBusy:
        raise busy_error() from None
    except RagpilotError as exc:
        raise http_error(exc) from exc
    return JSONResponse(public_answer(answer, public_id))


@router.post("/ask/stream")
def ask_stream(body: AskRequest, who: CallerDep, holder: HolderDep) -> EventSourceResponse:
    """Server-sent events: ``step`` (each node's event), ``token`` (answer text as it is written),
    then ``answer`` (the ``Answer`` object with citations); ``error`` if the run fails."""
    public_id = body.thread_id or uuid.uuid4().hex
    try:
        agent_ = holder.get()
    except RagpilotError as exc:
        raise http_error(exc) from exc

    def run(emit: Callable[[dict[str, str]], bool]) -> None:
        """The run, in its worker thread; stops when ``emit`` reports that nobody is listening."""
        try:
            for event in stream_answer(agent_, body.question, **run_options(body, who, holder, public_id)):
                if isinstance(event, StepUpdate):
                    listening = emit({"event": "step", "data": event.step.model_dump_json()})
                elif isinstance(event, TokenDelta):
                    payload = {"text": event.text, "attempt": event.attempt, "node": event.node}
                    listening = emit({"event": "token", "data": json.dumps(payload, ensure_ascii=False)})
                else:
                    answer = public_answer(event.answer, public_id)
                    listening = emit({"event": "answer", "data": json.dumps(answer, ensure_ascii=False)})
                if not listening:
                    return  # leaving the loop closes the run's generator: the graph stops here
        except Exception as exc:  # the stream has started: report in-band, never drop silently
            error = in_band_error(exc)
            emit(
                {"event": "error", "data": json.dumps({"status": error.status_code, "detail": error.detail})}
            )

    try:
        stream = DetachedRun(holder, run)
    except ServerBusy:
        raise busy_error() from None
    return EventSourceResponse(stream.events(), ping=15)


def in_band_error(exc: Exception) -> HTTPException:
    """A failure after a stream started, as the HTTP error it would have been before."""
    if isinstance(exc, RagpilotError):
        return http_error(exc)
    logger.exception("run failed while streaming")
    return HTTPException(status.HTTP_500_INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}")
