"""The real HTTP API on 127.0.0.1 (uvicorn in a thread) over the real Agent and a small real corpus."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI

from agent.agent import Agent
from core.settings import Settings, load_settings
from tests.fakes.running_api import serve_in_thread

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
    with serve_in_thread(settings, agent) as (base_url, app):
        running = RunningApi(base_url=base_url, settings=settings, agent=agent, app=app)
        # Each team uploads its own document through the API: readable by that team only.
        for key, name, text in ((KEY_A, "falcon.md", FALCON_DOC), (KEY_B, "heron.md", HERON_DOC)):
            with running.client(key) as client:
                response = client.post("/ingest", files={"files": (name, text.encode(), "text/markdown")})
                response.raise_for_status()
        yield running
    agent.close()
