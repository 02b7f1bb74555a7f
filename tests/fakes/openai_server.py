"""A fake OpenAI-compatible API on 127.0.0.1: ``/v1/chat/completions`` (plain and SSE) and ``/v1/embeddings``.

Tests script the chat replies in order: a message content (formatted as a completion, or as an SSE
stream when the request asks for ``stream: true``), or any ``FakeResponse`` (429 with Retry-After, 500,
a slow reply, a malformed body). With nothing scripted, chat answers 500 "unscripted request" so a
forgotten script fails loudly, unless ``auto_reply`` (load tests): then it fills the requested JSON
schema, or cites the first passage it was shown. Embeddings default to deterministic vectors derived from each input's
sha256, so equal texts get equal vectors; they can be scripted the same way.

    with FakeOpenAIServer() as api:
        api.script_chat(FakeOpenAIServer.rate_limited(), "Paris")
        ...  # ChatOpenAI(base_url=api.base_url, ...)
        assert len(api.chat_requests()) == 2
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import deque
from typing import Any

import numpy as np

from tests.fakes.http_server import FakeHTTPServer, FakeResponse, RecordedRequest

CHAT_PATH = "/v1/chat/completions"
EMBEDDINGS_PATH = "/v1/embeddings"
# Retries in the openai client honour this header; 10 ms keeps retry tests fast.
FAST_RETRY = {"retry-after-ms": "10"}


class FakeOpenAIServer:
    """Scriptable OpenAI-compatible endpoints over a real HTTP server (see the module docstring)."""

    def __init__(self, embedding_dim: int = 8, *, auto_reply: bool = False) -> None:
        self.http = FakeHTTPServer()
        self.embedding_dim = embedding_dim
        self.auto_reply = auto_reply  # answer unscripted chat requests (load tests) instead of a 500
        self._chat_script: deque[str | FakeResponse] = deque()
        self._embedding_script: deque[FakeResponse] = deque()
        self._lock = threading.Lock()
        self.http.set_default("POST", CHAT_PATH, self._answer_chat)
        self.http.set_default("POST", EMBEDDINGS_PATH, self._answer_embeddings)

    @property
    def base_url(self) -> str:
        """The value for ``base_url`` / ``OPENAI_BASE_URL`` (ends in ``/v1``)."""
        return self.http.base_url + "/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self.http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.stop()

    # Scripting ------------------------------------------------------------------------------------
    def script_chat(self, *replies: str | FakeResponse) -> None:
        """Queue chat replies: a str is the assistant's content, a FakeResponse is sent verbatim."""
        with self._lock:
            self._chat_script.extend(replies)

    def script_embeddings(self, *replies: FakeResponse) -> None:
        with self._lock:
            self._embedding_script.extend(replies)

    @staticmethod
    def rate_limited(retry_after_ms: int = 10) -> FakeResponse:
        return FakeResponse(
            status=429,
            json_body={
                "error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}
            },
            headers={"retry-after-ms": str(retry_after_ms)},
        )

    @staticmethod
    def server_error(status: int = 500) -> FakeResponse:
        return FakeResponse(
            status=status,
            json_body={"error": {"message": "The server had an error", "type": "server_error"}},
            headers=dict(FAST_RETRY),
        )

    @staticmethod
    def slow(seconds: float, content: str = "too late") -> FakeResponse:
        return FakeResponse(json_body=chat_completion_body(content), delay_s=seconds)

    @staticmethod
    def malformed_body() -> FakeResponse:
        return FakeResponse(raw_body=b'{"id": "chatcmpl-x", "choices": [ {"message": oops')

    # Inspection -----------------------------------------------------------------------------------
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.json() for r in self.http.requests_to("POST", CHAT_PATH)]

    def embedding_requests(self) -> list[dict[str, Any]]:
        return [r.json() for r in self.http.requests_to("POST", EMBEDDINGS_PATH)]

    # Responders -----------------------------------------------------------------------------------
    def _answer_chat(self, request: RecordedRequest) -> FakeResponse:
        with self._lock:
            reply = self._chat_script.popleft() if self._chat_script else None
        if reply is None and self.auto_reply:
            reply = automatic_reply(request.json())
        if reply is None:
            return FakeResponse(status=500, json_body={"error": {"message": "unscripted chat request"}})
        if isinstance(reply, FakeResponse):
            return reply
        payload = request.json()
        if payload.get("stream"):
            include_usage = bool((payload.get("stream_options") or {}).get("include_usage"))
            return FakeResponse(
                raw_body=sse_stream_body(reply, include_usage=include_usage),
                headers={"Content-Type": "text/event-stream"},
            )
        return FakeResponse(json_body=chat_completion_body(reply, model=payload.get("model", "fake-model")))

    def _answer_embeddings(self, request: RecordedRequest) -> FakeResponse:
        with self._lock:
            reply = self._embedding_script.popleft() if self._embedding_script else None
        if reply is not None:
            return reply
        payload = request.json()
        inputs = payload["input"] if isinstance(payload["input"], list) else [payload["input"]]
        dim = int(payload.get("dimensions") or self.embedding_dim)
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_vector(str(text), dim)}
            for i, text in enumerate(inputs)
        ]
        usage = {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}
        return FakeResponse(
            json_body={"object": "list", "data": data, "model": payload["model"], "usage": usage}
        )


_PASSAGE = re.compile(r'<passage id="(\d+)"[^>]*>\s*(.*?)\s*</passage>', re.DOTALL)


def automatic_reply(payload: dict[str, Any]) -> str:
    """A plausible reply with no script: a JSON object filling the requested schema, or, for a prompt
    showing passages, their first passage's first sentence cited (so a test sees what it was shown),
    else a short plain answer."""
    schema = ((payload.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema is not None:
        return json.dumps(value_for(schema, schema))
    user = str(payload["messages"][-1].get("content", ""))
    passages = _PASSAGE.findall(user)
    if passages:
        number, text = passages[0]
        return f"{text.split('. ')[0].rstrip('.')} [{number}]."
    return "Hello."


def value_for(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """The first valid value of a JSON schema: enums take their first member, objects every property."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return value_for(root.get("$defs", {})[name], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return value_for(schema["anyOf"][0], root)
    kind = schema.get("type")
    if kind == "object":
        return {name: value_for(sub, root) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [value_for(schema.get("items") or {}, root)] * int(schema.get("minItems", 1))
    return {"boolean": True, "integer": 1, "number": 0.5, "string": ""}.get(kind, "")


def hashed_vector(text: str, dim: int) -> list[float]:
    """A deterministic, deliberately unnormalised vector for ``text`` (the client must normalise)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    return (np.random.default_rng(seed).standard_normal(dim) * 3.0).tolist()


def chat_completion_body(
    content: str, *, model: str = "fake-model", finish_reason: str = "stop"
) -> dict[str, Any]:
    prompt_tokens, completion_tokens = 11, max(1, len(content.split()))
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def sse_stream_body(content: str, *, include_usage: bool) -> bytes:
    """``content`` as OpenAI's server-sent events: one chunk per word, then finish, usage and [DONE]."""
    words = content.split(" ")
    pieces = [w if i == 0 else " " + w for i, w in enumerate(words)]

    def event(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "fake-model",
            "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage:
            chunk["usage"] = usage
        return f"data: {json.dumps(chunk)}\n\n".encode()

    events = [event({"role": "assistant", "content": ""})]
    events += [event({"content": piece}) for piece in pieces]
    events.append(event({}, finish="stop"))
    if include_usage:
        events.append(
            event(
                {},
                usage={
                    "prompt_tokens": 11,
                    "completion_tokens": len(pieces),
                    "total_tokens": 11 + len(pieces),
                },
            )
        )
    events.append(b"data: [DONE]\n\n")
    return b"".join(events)
