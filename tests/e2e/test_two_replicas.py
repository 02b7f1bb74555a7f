"""Two ``ragpilot serve`` processes on one PostgreSQL thread store (issue 23): a conversation whose turns
alternate between the processes keeps its history, and a thread stays its owner's on either process.

The deployment of docs/deployment.md, read-only: the embedded vector store serves one process, so each
replica reads its own copy of the same knowledge base. The LLM is a fake OpenAI-compatible server on
127.0.0.1 (what is tested is where threads live, not the answers); the embedder is the real local one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.settings import load_settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.servers.ports import free_port
from tools.knowledge_base.ingest import ingest

REPO_ROOT = Path(__file__).resolve().parents[2]
KEYS = {"key-ada": ["public"], "key-bob": ["public"]}
START_TIMEOUT_S = 120


class Replica:
    """One ``ragpilot serve`` process on its own copy of the data directory."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = home / "serve.log"
        command = [
            sys.executable,
            "-c",
            "from agent.cli import app; app()",
            "serve",
            "--port",
            str(self.port),
        ]
        self.process = subprocess.Popen(
            command, cwd=home, env={**env, "RAGPILOT_HOME": str(home)}, stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"ragpilot serve did not start:\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers={"X-API-Key": key}, timeout=300)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(auto_reply=True) as server:
        yield server


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, postgres_server, llm: FakeOpenAIServer
) -> Iterator[tuple[Replica, Replica]]:  # type: ignore[no-untyped-def]
    first_home = tmp_path_factory.mktemp("replica-a")
    docs = first_home.parent / "replica-docs"
    docs.mkdir()
    (docs / "falcon.md").write_text("# Project Falcon\n\nProject Falcon answers routing requests in 40 ms.\n")
    ingest([docs], load_settings(home=first_home), progress=False)
    second_home = first_home.parent / "replica-b"
    shutil.copytree(first_home, second_home)  # the same knowledge base, read by its own process
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "RAGPILOT_CHAT__CHECKPOINTER": "postgres",
        "RAGPILOT_CHAT__POSTGRES_URL": postgres_server.new_database("replicas"),
        "RAGPILOT_LLM__PROVIDER": "openai",
        "RAGPILOT_LLM__BASE_URL": llm.base_url,
        "RAGPILOT_SERVER__API_KEYS": json.dumps(KEYS),
    }
    started: list[Replica] = []
    try:
        for home in (first_home, second_home):
            started.append(Replica(home, env))
        yield started[0], started[1]
    finally:
        for replica in started:
            replica.stop()


def _ask(replica: Replica, key: str, question: str, thread_id: str) -> dict:
    with replica.client(key) as client:
        response = client.post("/ask", json={"question": question, "thread_id": thread_id, "route": "single"})
    assert response.status_code == 200, response.text
    return response.json()


def test_turns_alternating_between_replicas_keep_one_history(
    replicas: tuple[Replica, Replica], llm: FakeOpenAIServer
) -> None:
    a, b = replicas
    questions = ["How fast is Project Falcon?", "Who runs it?", "And since when?"]
    for replica, question in zip((a, b, a), questions, strict=True):
        _ask(replica, "key-ada", question, "shared")

    for replica in (a, b):  # either process reads the whole conversation
        with replica.client("key-ada") as client:
            turns = client.get("/threads/shared").json()["turns"]
        assert [t["question"] for t in turns] == questions
    # The third turn, on replica A, was read against the second, which only replica B had seen.
    rewrites = [
        r["messages"][-1]["content"]
        for r in llm.chat_requests()
        if "Conversation so far" in str(r["messages"][-1])
    ]
    assert "Who runs it?" in rewrites[-1] and "How fast is Project Falcon?" in rewrites[-1]


def test_a_thread_stays_its_owners_on_either_replica(replicas: tuple[Replica, Replica]) -> None:
    a, b = replicas
    _ask(a, "key-ada", "How fast is Project Falcon?", "private")

    for replica in (a, b):
        with replica.client("key-bob") as client:
            assert client.get("/threads/private").status_code == 404
            assert client.delete("/threads/private").status_code == 404
    with b.client("key-ada") as client:
        assert client.delete("/threads/private").status_code == 204
    with a.client("key-ada") as client:
        assert client.get("/threads/private").status_code == 404  # deleted on B, gone for A
