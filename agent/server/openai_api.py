"""OpenAI-compatible chat: ``POST /v1/chat/completions`` and ``GET /v1/models``, so any chat UI or SDK
that speaks OpenAI's API can talk to ragpilot.

- **Models** are route policies over this server's knowledge base: ``ragpilot`` (the classifier
  decides), ``ragpilot-direct``, ``ragpilot-single``, ``ragpilot-iterative``.
- **The conversation** arrives as ``messages``; the last one is the question, the earlier user and
  assistant messages are the history the follow-up is read against. No server-side thread is needed.
  A client that wants one passes ``thread_id`` (with the OpenAI SDK: ``extra_body={"thread_id":
  ...}``): the thread's stored history is used instead, and the turn is saved to it. Threads are the
  caller's own, exactly as on ``/ask``.
- **Citations** reach a plain chat UI as ``[n]`` markers in the text followed by a "Sources:" list, and
  a program as the ``ragpilot`` extension field (citations, short answer, route, refusal, budget).
  A refusal is an ordinary reply saying the sources do not hold the answer (``ragpilot.refused``); an
  answer cut short by the question's budget ends with ``finish_reason: "length"``.
- **Streaming** (``stream: true``) sends OpenAI's ``chat.completion.chunk`` events ending in ``[DONE]``.
  Progress arrives as SSE comments (one per graph step, ignored by clients) while the answer is being
  checked; the text is streamed once its sentences passed the support check, so a client never shows
  words that the checks then withdraw.
- **Identity**: ``Authorization: Bearer <key>`` maps to ACL groups exactly like ``X-API-Key``.
- **Errors** use OpenAI's shape ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, FastAPI, Request, status
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from sse_starlette.sse import EventSourceResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent.run_loop import FinalAnswer, StepUpdate, run_to_answer, stream_answer
from agent.server.identity import Caller
from agent.server.openai_schemas import (
    ChatCompletionRequest,
    ChatMessageIn,
    ModelCard,
    ModelList,
    RagpilotExtension,
    Usage,
    error_payload,
)
from agent.server.routes_ask import in_band_error
from agent.server.runs import (
    RETRY_AFTER_S,
    CallerDep,
    DetachedRun,
    HolderDep,
    ServerBusy,
    http_error,
    stored_thread_id,
)
from core.answer import Answer
from core.errors import RagpilotError
from core.vocabulary import ROUTE_REQUESTS, RouteRequest

PREFIX = "/v1"
MODEL_NAME = "ragpilot"
SOURCES_HEADING = "\n\nSources:"  # where the text a chat UI shows turns into the sources list
STREAM_PIECE_CHARS = 48  # the checked answer is streamed in pieces of about this size
_CREATED = int(time.time())

router = APIRouter(prefix=PREFIX, tags=["openai"])


class OpenAIError(Exception):
    """An error reported in OpenAI's shape."""

    def __init__(
        self, status_code: int, message: str, type_: str, *, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.payload = error_payload(message, type_, param=param, code=code)


def model_routes() -> dict[str, RouteRequest]:
    """Each served model name and the route policy it stands for."""
    return {MODEL_NAME if r == "auto" else f"{MODEL_NAME}-{r}": r for r in ROUTE_REQUESTS}


_ROUTE_DESCRIPTIONS = {
    "auto": "the Adaptive-RAG classifier picks direct, single-shot or iterative retrieval",
    "direct": "answers without retrieval (escalates when the knowledge base holds the answer)",
    "single": "one retrieval, graded, refined and checked",
    "iterative": "IRCoT: reason a step, retrieve for it, repeat (multi-hop)",
}


@router.get("/models", response_model=ModelList)
def list_models(who: CallerDep) -> ModelList:
    """The route policies this server answers with, as OpenAI models."""
    return ModelList(data=[_card(name, route) for name, route in model_routes().items()])


@router.get("/models/{model}", response_model=ModelCard)
def get_model(model: str, who: CallerDep) -> ModelCard:
    return _card(model, _route_for(model))


def _card(name: str, route: RouteRequest) -> ModelCard:
    return ModelCard(id=name, created=_CREATED, description=_ROUTE_DESCRIPTIONS[route])


def _route_for(model: str) -> RouteRequest:
    route = model_routes().get(model)
    if route is None:
        raise OpenAIError(
            status.HTTP_404_NOT_FOUND,
            f"The model '{model}' does not exist; this server offers {', '.join(model_routes())}",
            "invalid_request_error",
            param="model",
            code="model_not_found",
        )
    return route


def conversation_turn(messages: list[ChatMessageIn]) -> tuple[str, list[BaseMessage]]:
    """The question (the last message, a user's) and the user/assistant history before it.

    System and tool messages are not read: ragpilot answers with its own prompts and tools. An
    assistant message loses the sources list this endpoint appended to it.
    """
    last = messages[-1]
    question = last.text().strip()
    if last.role != "user" or not question:
        raise OpenAIError(
            status.HTTP_400_BAD_REQUEST,
            "the last message must be a user message with text: it is the question",
            "invalid_request_error",
            param=f"messages[{len(messages) - 1}]",
        )
    history: list[BaseMessage] = []
    for message in messages[:-1]:
        text = message.text().strip()
        if not text:
            continue
        if message.role == "user":
            history.append(HumanMessage(text))
        elif message.role == "assistant":
            history.append(AIMessage(text.split(SOURCES_HEADING, 1)[0].strip()))
    return question, history


def extension(answer: Answer, public_thread_id: str | None) -> RagpilotExtension:
    return RagpilotExtension(
        citations=answer.citations,
        short_answer=answer.short_answer,
        route=answer.route,
        refused=answer.refused,
        refusal_reason=answer.refusal_reason,
        partial=answer.partial,
        budget_exhausted=answer.budget_exhausted,
        run_id=answer.run_id,
        thread_id=public_thread_id,
        standalone_question=answer.standalone_question,
    )


def _usage(answer: Answer) -> dict[str, int]:
    prompt, completion = answer.llm_input_tokens, answer.llm_output_tokens
    return Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    ).model_dump()


def _finish_reason(answer: Answer) -> str:
    return "length" if answer.budget_exhausted else "stop"


class _Turn:
    """One request resolved: who asks what, on which route, with which history or thread."""

    def __init__(self, body: ChatCompletionRequest, who: Caller) -> None:
        self.model = body.model
        self.route = _route_for(body.model)
        self.question, history = conversation_turn(body.messages)
        self.public_thread_id = body.thread_id
        self.history = None if body.thread_id else history
        self.thread_id = stored_thread_id(who, body.thread_id) if body.thread_id else None
        self.groups = who.groups
        self.completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def run_options(self, holder: Any) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "groups": self.groups,
            "route": self.route,
            "budget": holder.settings.graph.budget,
            "history": self.history,
        }

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
        body = {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            **extra,
        }
        return json.dumps(body, ensure_ascii=False)


@router.post("/chat/completions", response_model=None)
def chat_completions(body: ChatCompletionRequest, who: CallerDep, holder: HolderDep) -> Response:
    """One assistant reply to the conversation in ``messages`` (streamed with ``stream: true``)."""
    turn = _Turn(body, who)
    try:
        agent_ = holder.get()
    except RagpilotError as exc:
        raise _as_openai_error(exc) from exc
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return _stream(turn, agent_, holder, include_usage)
    try:
        with holder.run_slot():
            answer = run_to_answer(agent_, turn.question, **turn.run_options(holder))
    except ServerBusy:
        raise _busy() from None
    except RagpilotError as exc:
        raise _as_openai_error(exc) from exc
    completion = {
        "id": turn.completion_id,
        "object": "chat.completion",
        "created": turn.created,
        "model": turn.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.readable_text()},
                "finish_reason": _finish_reason(answer),
            }
        ],
        "usage": _usage(answer),
        "ragpilot": extension(answer, turn.public_thread_id).model_dump(mode="json"),
    }
    return JSONResponse(completion)


def _stream(turn: _Turn, agent_: Any, holder: Any, include_usage: bool) -> EventSourceResponse:
    def run(emit: Callable[[dict[str, str]], bool]) -> None:
        try:
            if not emit({"data": turn.chunk({"role": "assistant", "content": ""})}):
                return
            for event in stream_answer(agent_, turn.question, tokens=False, **turn.run_options(holder)):
                listening = True
                if isinstance(event, StepUpdate):
                    listening = emit({"comment": f"step {event.step.node}"})
                elif isinstance(event, FinalAnswer):
                    listening = _emit_answer(turn, event.answer, emit, include_usage)
                if not listening:
                    return  # the client left: closing the run's generator stops the graph
        except Exception as exc:  # the stream has started: OpenAI's in-band error, then the end
            error = in_band_error(exc)
            emit({"data": json.dumps(error_payload(str(error.detail), _error_type(error.status_code)))})
        emit({"data": "[DONE]"})

    try:
        stream = DetachedRun(holder, run)
    except ServerBusy:
        raise _busy() from None
    return EventSourceResponse(stream.events(), ping=15)


def _emit_answer(
    turn: _Turn, answer: Answer, emit: Callable[[dict[str, str]], bool], include_usage: bool
) -> bool:
    text = answer.readable_text()
    for start in range(0, len(text), STREAM_PIECE_CHARS):
        if not emit({"data": turn.chunk({"content": text[start : start + STREAM_PIECE_CHARS]})}):
            return False
    last = turn.chunk(
        {}, _finish_reason(answer), ragpilot=extension(answer, turn.public_thread_id).model_dump(mode="json")
    )
    if not emit({"data": last}):
        return False
    if include_usage:
        usage = json.loads(turn.chunk({}))
        usage.update(choices=[], usage=_usage(answer))
        return emit({"data": json.dumps(usage)})
    return True


# --- errors in OpenAI's shape ---------------------------------------------------------------------------

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    503: "server_error",
}


def _error_type(status_code: int) -> str:
    return _TYPES.get(status_code, "server_error" if status_code >= 500 else "invalid_request_error")


def _as_openai_error(exc: RagpilotError) -> OpenAIError:
    error = http_error(exc)
    return OpenAIError(error.status_code, str(error.detail), _error_type(error.status_code))


def _busy() -> OpenAIError:
    return OpenAIError(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        "every run slot is taken (server.max_queued_runs); try again shortly",
        "server_error",
        code="server_busy",
    )


def install_openai_errors(app: FastAPI) -> None:
    """Answer errors on ``/v1`` paths in OpenAI's shape; every other path keeps FastAPI's."""

    async def openai_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, OpenAIError)
        headers = (
            {"Retry-After": str(RETRY_AFTER_S)} if exc.payload["error"]["code"] == "server_busy" else None
        )
        return JSONResponse(exc.payload, status_code=exc.status_code, headers=headers)

    async def http_error_shape(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if not request.url.path.startswith(PREFIX):
            return await http_exception_handler(request, exc)
        code = "invalid_api_key" if exc.status_code == status.HTTP_401_UNAUTHORIZED else None
        payload = error_payload(str(exc.detail), _error_type(exc.status_code), code=code)
        return JSONResponse(payload, status_code=exc.status_code, headers=exc.headers)

    async def validation_error_shape(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        if not request.url.path.startswith(PREFIX):
            return await request_validation_exception_handler(request, exc)
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        param = ".".join(str(p) for p in first["loc"] if p != "body") or None
        payload = error_payload(f"{param or 'request'}: {first['msg']}", "invalid_request_error", param=param)
        return JSONResponse(payload, status_code=status.HTTP_400_BAD_REQUEST)

    app.add_exception_handler(OpenAIError, openai_error)
    app.add_exception_handler(StarletteHTTPException, http_error_shape)
    app.add_exception_handler(RequestValidationError, validation_error_shape)
