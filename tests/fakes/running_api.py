"""The real HTTP API served by uvicorn in a thread on a free port of 127.0.0.1 (tests and load benches)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from agent.server.app import create_app
from core.settings import Settings


@contextmanager
def serve_in_thread(settings: Settings, agent: Any | None = None) -> Iterator[tuple[str, Any]]:
    """``(base_url, app)`` while the server runs; it is stopped and joined on exit."""
    app = create_app(settings, agent)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:  # bounded wait for the socket
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=30)
