"""A small scriptable HTTP server on 127.0.0.1 for testing hosted-provider clients over real HTTP.

Each test queues the responses it wants per route (status, JSON or raw body, headers, a delay before
answering); when a route's queue is empty the route's default responder answers, or the server replies
500 "unscripted request" so a forgotten script fails loudly. Every request is recorded for assertions.

    with FakeHTTPServer() as server:
        server.enqueue("POST", "/v2/rerank", FakeResponse(status=429, headers={"Retry-After": "1"}))
        server.enqueue("POST", "/v2/rerank", FakeResponse(json_body={...}))
        ...  # point the client at server.base_url
        assert len(server.requests_to("POST", "/v2/rerank")) == 2
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeResponse:
    """One scripted reply. ``raw_body`` wins over ``json_body`` (use it for malformed JSON)."""

    status: int = 200
    json_body: Any = None
    raw_body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    def body_bytes(self) -> bytes:
        if self.raw_body is not None:
            return self.raw_body
        return json.dumps(self.json_body if self.json_body is not None else {}).encode("utf-8")


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


Responder = Callable[[RecordedRequest], FakeResponse]


class FakeHTTPServer:
    """A threaded HTTP server bound to a free port on 127.0.0.1, replaying scripted responses."""

    def __init__(self) -> None:
        self._queues: dict[tuple[str, str], deque[FakeResponse]] = {}
        self._defaults: dict[tuple[str, str], Responder] = {}
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def enqueue(self, method: str, path: str, *responses: FakeResponse) -> None:
        """Queue replies for ``method path``, served in order, one per request."""
        with self._lock:
            self._queues.setdefault((method.upper(), path), deque()).extend(responses)

    def set_default(self, method: str, path: str, responder: Responder) -> None:
        """Answer ``method path`` with ``responder(request)`` whenever its queue is empty."""
        with self._lock:
            self._defaults[(method.upper(), path)] = responder

    def requests_to(self, method: str, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.method == method.upper() and r.path == path]

    def start(self) -> FakeHTTPServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-http", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeHTTPServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_response(self, request: RecordedRequest) -> FakeResponse:
        key = (request.method, request.path)
        with self._lock:
            self.requests.append(request)
            queue = self._queues.get(key)
            if queue:
                return queue.popleft()
            responder = self._defaults.get(key)
        if responder is not None:
            return responder(request)
        return FakeResponse(status=500, json_body={"message": f"unscripted request {key[0]} {key[1]}"})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls between header and body writes

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                request = RecordedRequest(self.command, path, dict(self.headers.items()), body)
                reply = server._next_response(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.body_bytes()
                try:
                    self.send_response(reply.status)
                    headers = {"Content-Type": "application/json", **reply.headers}
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing left to tell it

            do_GET = _serve
            do_POST = _serve
            do_PUT = _serve
            do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                return  # keep test output quiet

        return Handler
