"""The real HTTP API on 127.0.0.1 (uvicorn in a thread) over the real Agent and a small real corpus."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from agent.agent import Agent
from agent.server.app import create_app
from core.settings import Settings, load_settings

KEY_A, KEY_B = "key-team-a", "key-team-b"

FALCON_DOC = """# Project Falcon

Project Falcon is the new order-routing service of the logistics team.
Project Falcon answers routing requests in 40 milliseconds at the median.
"""

HERON_DOC = """# Project Heron

Project Heron is the confidential acquisition plan of the finance team.
The budget of Project Heron is 3 million euros.
"""


@dataclass
class RunningApi:
    base_url: str
    settings: Settings
    agent: Agent
    app: FastAPI

    def client(self, key: str | None = None, timeout: float = 900.0) -> httpx.Client:
        headers = {"X-API-Key": key} if key else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApi]:
    home = tmp_path_factory.mktemp("api-home")
    settings = load_settings(
        home=home,
        server={"api_keys": {KEY_A: ["team-a"], KEY_B: ["team-b"]}},
        # Fusion order is enough for a two-document corpus; keeps the LLM calls to the answer path.
        rerank={"provider": "none"},
    )
    agent = Agent(settings)
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
    running = RunningApi(base_url=f"http://127.0.0.1:{port}", settings=settings, agent=agent, app=app)
    # Each team uploads its own document through the API: readable by that team only.
    for key, name, text in ((KEY_A, "falcon.md", FALCON_DOC), (KEY_B, "heron.md", HERON_DOC)):
        with running.client(key) as client:
            response = client.post("/ingest", files={"files": (name, text.encode(), "text/markdown")})
            response.raise_for_status()
    yield running
    server.should_exit = True
    thread.join(timeout=30)
    agent.close()
