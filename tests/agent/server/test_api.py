"""The HTTP API driven over real HTTP: identity and ACL, ask, SSE streaming, threads, ingest."""

from __future__ import annotations

import json
import re

import pytest

from agent.tracing.store import TraceStore
from tests.agent.server.conftest import KEY_A, KEY_B, RunningApi


def parse_sse(lines: list[str]) -> list[tuple[str, dict]]:
    """Server-sent events as (event, data) pairs; comments (pings) are skipped."""
    events, event, data = [], "message", []
    for line in lines:
        line = line.rstrip("\r")
        if not line:
            if data:
                events.append((event, json.loads("\n".join(data))))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[len("event:") :].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:") :].lstrip())
    if data:
        events.append((event, json.loads("\n".join(data))))
    return events


# --- identity (no model calls) ---------------------------------------------------------------------


def test_health_answers_without_a_key(api: RunningApi) -> None:
    with api.client() as client:
        response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


@pytest.mark.parametrize(
    "headers",
    [{"X-API-Key": "not-a-key"}, {"Authorization": "Bearer not-a-key"}, {"Authorization": "Basic abc"}],
)
def test_unknown_or_malformed_credentials_are_401(api: RunningApi, headers: dict[str, str]) -> None:
    with api.client() as client:
        response = client.post("/ask", json={"question": "Falcon?"}, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


def test_with_keys_configured_a_caller_without_a_key_is_401(api: RunningApi) -> None:
    with api.client() as client:
        for response in (
            client.post("/ask", json={"question": "Falcon?"}),
            client.post("/ingest", files={"files": ("a.md", b"# A\n\nPublic text.", "text/markdown")}),
            client.get("/threads/t1"),
        ):
            assert response.status_code == 401
            assert "API key is required" in response.json()["detail"]


@pytest.mark.parametrize("acl", [" , ", ",", " "])
def test_an_empty_acl_is_422_not_a_document_nobody_can_read(api: RunningApi, acl: str) -> None:
    with api.client(KEY_A) as client:
        response = client.post(
            "/ingest", data={"acl": acl}, files={"files": ("e.md", b"# E\n\nText.", "text/markdown")}
        )
    assert response.status_code == 422 and "acl names no group" in response.json()["detail"]


def test_groups_in_the_body_are_rejected(api: RunningApi) -> None:
    with api.client(KEY_A) as client:
        response = client.post("/ask", json={"question": "Heron budget?", "groups": ["team-b"]})
    assert response.status_code == 422
    assert "groups" in response.text


@pytest.mark.parametrize(
    "body",
    [
        {"question": "   "},
        {"question": "x" * 4001},
        {"question": "q", "route": "fast"},
        {"question": "q", "budget": {"llm_calls": 0}},
        {"question": "q", "budget": {"minutes": 3}},
    ],
)
def test_invalid_questions_are_422_before_any_model_runs(api: RunningApi, body: dict) -> None:
    with api.client(KEY_A) as client:
        assert client.post("/ask", json=body).status_code == 422
        assert client.post("/ask/stream", json=body).status_code == 422


def test_unknown_thread_is_404(api: RunningApi) -> None:
    with api.client(KEY_A) as client:
        assert client.get("/threads/never-asked").status_code == 404
        assert client.delete("/threads/never-asked").status_code == 404
        assert client.get("/threads/bad%20id").status_code == 422


# --- ingest (embeddings, no LLM) -------------------------------------------------------------------


def test_ingest_reports_each_file_and_the_acl_it_applied(api: RunningApi) -> None:
    with api.client(KEY_A) as client:
        response = client.post(
            "/ingest",
            files=[
                (
                    "files",
                    (
                        "falcon.md",
                        b"# Project Falcon\n\nProject Falcon answers in 40 milliseconds at the median.\n",
                        "text/markdown",
                    ),
                ),
                ("files", ("tool.exe", b"MZ", "application/octet-stream")),
            ],
        )
    assert response.status_code == 200
    body = response.json()
    assert body["acl"] == ["team-a"]
    by_name = {f["filename"]: f for f in body["files"]}
    assert by_name["tool.exe"] == {
        "filename": "tool.exe",
        "status": "failed",
        "chunks": 0,
        "error": "unsupported file type",
    }
    assert by_name["falcon.md"]["status"] in ("ingested", "unchanged")


def test_an_upload_cannot_replace_another_tenants_document(api: RunningApi) -> None:
    store = api.agent.resources.knowledge_base.store
    heron = next(state for state in store.documents().values() if state.source.endswith("/heron.md"))
    forged = json.dumps(
        {"_id": heron.doc_id, "title": "Heron", "text": "The budget of Project Heron is zero."}
    )
    for key in (KEY_A, None):  # another team's key, and no key at all
        with api.client(key) as client:
            response = client.post(
                "/ingest", files={"files": ("forged.jsonl", forged.encode(), "application/jsonl")}
            )
        assert response.status_code in (200, 401), response.text
        if response.status_code == 200:
            (result,) = response.json()["files"]
            assert result["status"] == "failed" and "belongs to another file" in result["error"]

    kept = store.documents()[heron.doc_id]
    assert (kept.source, kept.content_hash) == (heron.source, heron.content_hash)
    assert all("zero" not in chunk.text for chunk in store.scroll(None) if chunk.doc_id == heron.doc_id)


def test_ingest_cannot_grant_groups_the_caller_lacks(api: RunningApi) -> None:
    with api.client(KEY_A) as client:
        response = client.post(
            "/ingest", data={"acl": "team-b"}, files={"files": ("x.md", b"# x\n\ntext\n", "text/markdown")}
        )
    assert response.status_code == 403 and "team-b" in response.json()["detail"]


def test_upload_names_cannot_escape_the_upload_directory(api: RunningApi) -> None:
    with api.client(KEY_A) as client:
        response = client.post(
            "/ingest", files={"files": ("../../evil.md", b"# Evil\n\nNothing.\n", "text/markdown")}
        )
    assert response.status_code == 200 and response.json()["files"][0]["filename"] == "evil.md"
    assert not (api.settings.home / "evil.md").exists()
    assert list((api.settings.home / "uploads").rglob("evil.md"))


# --- answering (local LLM) -------------------------------------------------------------------------


@pytest.mark.llm
def test_a_request_budget_returns_a_partial_answer_within_the_servers_ceiling(api: RunningApi) -> None:
    question = {"question": "How fast does Project Falcon answer routing requests?", "route": "single"}
    with api.client(KEY_A) as client:
        response = client.post("/ask", json=question | {"budget": {"llm_calls": 1, "seconds": 86_400}})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["partial"] and answer["budget_exhausted"] == "llm_calls: 1 of 1"
    assert answer["llm_calls"] == 1 and [v["verdict"] for v in answer["support"]] == ["unchecked"] * len(
        answer["support"]
    )
    [start] = [
        s for s in TraceStore(api.settings.traces_dir).load(answer["run_id"]).steps if s.node == "start_turn"
    ]
    assert start.decision["budget"]["seconds"] == api.settings.graph.budget.seconds  # capped by the server


@pytest.mark.llm
def test_ask_answers_with_citations_and_the_thread_is_the_callers_own(api: RunningApi) -> None:
    with api.client(KEY_A) as client:
        response = client.post(
            "/ask",
            json={
                "question": "How fast does Project Falcon answer routing requests?",
                "thread_id": "falcon-1",
            },
        )
        assert response.status_code == 200, response.text
        answer = response.json()
        assert re.search(r"(?<![\d.])40(?![\d.])", answer["answer"]) and not answer["refused"]
        assert answer["thread_id"] == "falcon-1"
        assert any(c["source"].endswith("falcon.md") for c in answer["citations"])

        thread = client.get("/threads/falcon-1").json()
        assert [t["question"] for t in thread["turns"]] == [
            "How fast does Project Falcon answer routing requests?"
        ]
        assert thread["turns"][0]["answer"] == answer["answer"]

    with api.client(KEY_B) as other:  # another key cannot see, nor delete, team A's thread
        assert other.get("/threads/falcon-1").status_code == 404
        assert other.delete("/threads/falcon-1").status_code == 404

    with api.client(KEY_A) as client:
        assert client.delete("/threads/falcon-1").status_code == 204
        assert client.get("/threads/falcon-1").status_code == 404


@pytest.mark.llm
def test_stream_sends_steps_then_tokens_then_the_cited_answer(api: RunningApi) -> None:
    with (
        api.client(KEY_A) as client,
        client.stream(
            "POST", "/ask/stream", json={"question": "What is Project Falcon?", "thread_id": "falcon-sse"}
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(list(response.iter_lines()))
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "answer" and "error" not in kinds
    steps = [data["node"] for kind, data in events if kind == "step"]
    assert steps[0] == "start_turn" and "retrieve" in steps and "generate_answer" in steps
    tokens = [data["text"] for kind, data in events if kind == "token"]
    assert len(tokens) > 3  # streamed piece by piece, not in one block
    first_token = kinds.index("token")
    assert kinds.index("step") < first_token < kinds.index("answer")
    answer = events[-1][1]
    assert answer["thread_id"] == "falcon-sse" and answer["citations"]
    assert "falcon" in "".join(tokens).lower() and "falcon" in answer["answer"].lower()


@pytest.mark.llm
def test_a_key_never_retrieves_another_teams_document(api: RunningApi) -> None:
    with api.client(KEY_A) as client:
        response = client.post("/ask", json={"question": "What is the budget of Project Heron?"})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert "3 million" not in answer["answer"]
    assert all(not c["source"].endswith("heron.md") for c in answer["citations"])
    # The stored trace shows what retrieval saw: nothing of team B's document, whatever the model said.
    trace = TraceStore(api.settings.traces_dir).load(answer["run_id"])
    retrieved = [h["source"] for s in trace.steps if s.node == "retrieve" for h in s.decision["hits"]]
    assert retrieved and not any(source.endswith("heron.md") for source in retrieved)

    with api.client(KEY_B) as client:  # the owner of the document is answered from it
        answer_b = client.post("/ask", json={"question": "What is the budget of Project Heron?"}).json()
    assert re.search(r"(?<![\d.])3(?![\d.])", answer_b["answer"]) and "million" in answer_b["answer"]
    assert any(c["source"].endswith("heron.md") for c in answer_b["citations"])


# --- a server that survives its clients (issue 14, finding 2) ----------------------------------------


@pytest.mark.llm
def test_a_client_that_drops_its_stream_never_blocks_the_others(api: RunningApi) -> None:
    with api.client(KEY_A) as client:
        with client.stream("POST", "/ask/stream", json={"question": "What is Project Falcon?"}) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if line.startswith("event: step"):
                    break  # the run is in progress: hang up mid-stream
        # While the abandoned run finishes its step, the server still answers.
        assert client.get("/healthz", timeout=10).status_code == 200
    with api.client(KEY_B, timeout=300) as other:
        answer = other.post("/ask", json={"question": "What is the budget of Project Heron?"})
        assert answer.status_code == 200, answer.text
        assert "3 million" in answer.json()["answer"]
        assert other.get("/threads/never-there").status_code == 404


def test_beyond_the_run_queue_the_server_answers_503_with_retry_after(api: RunningApi) -> None:
    slots = api.app.state.holder._slots  # the run in progress plus the waiting places
    taken = 0
    while slots.acquire(blocking=False):  # every place taken, as by a crowd of clients
        taken += 1
    try:
        with api.client(KEY_A, timeout=10) as client:
            busy = client.post("/ask", json={"question": "What is Project Falcon?"})
            streamed = client.post("/ask/stream", json={"question": "What is Project Falcon?"})
            health = client.get("/healthz")
    finally:
        for _ in range(taken):
            slots.release()
    assert taken == api.settings.server.max_queued_runs + 1
    assert health.status_code == 200
    for response in (busy, streamed):
        assert response.status_code == 503, response.text
        assert int(response.headers["Retry-After"]) > 0
