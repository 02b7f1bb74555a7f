"""``GET`` / ``DELETE /threads/{id}``: the caller's own threads (stored as ``<owner>--<id>``)."""

from __future__ import annotations

import re

from fastapi import APIRouter, HTTPException, status
from fastapi.responses import Response

from agent.server.runs import CallerDep, HolderDep, ServerBusy, busy_error, stored_thread_id
from agent.server.schemas import THREAD_ID_PATTERN, ThreadOut, ThreadTurnOut
from agent.threads import ThreadError

router = APIRouter(tags=["threads"])


def _thread_id_or_422(thread_id: str) -> str:
    if not re.match(THREAD_ID_PATTERN, thread_id):
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, "thread id: letters, digits, '-', '_' (1-64)"
        )
    return thread_id


@router.get("/threads/{thread_id}", response_model=ThreadOut)
def get_thread(thread_id: str, who: CallerDep, holder: HolderDep) -> ThreadOut:
    """The caller's thread: its turns and the last answer's citations (404 if it has none)."""
    stored = stored_thread_id(who, _thread_id_or_422(thread_id))
    try:
        with holder.run_slot():
            detail = holder.threads().get_thread(stored)
    except ServerBusy:
        raise busy_error() from None
    except ThreadError:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no thread {thread_id!r}") from None
    return ThreadOut(
        thread_id=thread_id,
        updated_at=detail.updated_at.isoformat(),
        turns=[ThreadTurnOut(question=t.question, answer=t.answer) for t in detail.turns],
        last_citations=detail.last_citations,
    )


@router.delete("/threads/{thread_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_thread(thread_id: str, who: CallerDep, holder: HolderDep) -> Response:
    """Delete the caller's thread (404 if it has none)."""
    stored = stored_thread_id(who, _thread_id_or_422(thread_id))
    try:
        with holder.run_slot():
            holder.threads().delete_thread(stored)
    except ServerBusy:
        raise busy_error() from None
    except ThreadError:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no thread {thread_id!r}") from None
    return Response(status_code=status.HTTP_204_NO_CONTENT)
