"""The MCP server driven by the official SDK's own client: over streamable HTTP (``/mcp`` in the running
server, identity from the API key) and over stdio (``ragpilot mcp`` as a child process, identity from
its settings). Tool arguments never widen the caller's groups."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from core.settings import load_settings
from tests.agent.server.conftest import KEY_A, KEY_B, RunningApi
from tools.knowledge_base.ingest import ingest

REPO_ROOT = Path(__file__).resolve().parents[3]
HERON_BUDGET = "What is the budget of Project Heron?"


async def _over_http(api: RunningApi, key: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with (
        httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=900) as http,
        Client(streamable_http_client(f"{api.base_url}/mcp", http_client=http)) as client,
    ):
        results: list[Any] = []
        for name, arguments in calls:
            results.append(
                await client.list_tools() if name == "list_tools" else await client.call_tool(name, arguments)
            )
        return results


def over_http(api: RunningApi, key: str, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    return asyncio.run(_over_http(api, key, list(calls)))


def sources(result: Any) -> list[str]:
    assert not result.is_error, result.content
    return [p["source"] for p in result.structured_content["passages"]]


# --- over HTTP ------------------------------------------------------------------------------------------


def test_the_tools_are_listed_and_none_takes_an_identity(api: RunningApi) -> None:
    (listed,) = over_http(api, KEY_A, ("list_tools", {}))

    schemas = {tool.name: tool.input_schema for tool in listed.tools}
    assert set(schemas) == {"search_knowledge_base", "ask", "read_neighbourhood"}
    assert all("groups" not in schema["properties"] for schema in schemas.values())
    assert schemas["search_knowledge_base"]["required"] == ["query"]


def test_search_reads_with_the_keys_groups_and_an_argument_cannot_widen_them(api: RunningApi) -> None:
    plain, widened = over_http(
        api,
        KEY_A,
        ("search_knowledge_base", {"query": HERON_BUDGET}),
        ("search_knowledge_base", {"query": HERON_BUDGET, "groups": ["team-b"], "user_groups": ["team-b"]}),
    )
    (owner,) = over_http(api, KEY_B, ("search_knowledge_base", {"query": HERON_BUDGET}))

    assert sources(plain) and not any(s.endswith("heron.md") for s in sources(plain))
    assert not any(s.endswith("heron.md") for s in sources(widened))
    assert sources(owner)[0].endswith("heron.md")


def test_read_neighbourhood_returns_a_readable_passage_and_nothing_of_another_team(api: RunningApi) -> None:
    (found,) = over_http(api, KEY_B, ("search_knowledge_base", {"query": HERON_BUDGET, "top_k": 1}))
    heron_chunk = found.structured_content["passages"][0]["chunk_id"]

    own, foreign = over_http(
        api, KEY_B, ("read_neighbourhood", {"chunk_id": heron_chunk}), ("list_tools", {})
    )
    (stranger,) = over_http(api, KEY_A, ("read_neighbourhood", {"chunk_id": heron_chunk}))

    assert any("3 million" in p["text"] for p in own.structured_content["passages"])
    assert stranger.structured_content["passages"] == []
    assert foreign.tools  # the session stayed usable


def test_a_filter_error_is_a_tool_error_naming_the_filter(api: RunningApi) -> None:
    (result,) = over_http(api, KEY_A, ("search_knowledge_base", {"query": "Falcon", "filter": {"$nope": 1}}))

    assert result.is_error and "$nope" in result.content[0].text


def test_a_bad_key_is_refused_before_mcp_reads_the_request(api: RunningApi) -> None:
    with httpx.Client(base_url=api.base_url) as plain:
        response = plain.post(
            "/mcp",
            headers={"X-API-Key": "not-a-key", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    assert response.status_code == 401 and response.json() == {"detail": "unknown API key"}


@pytest.mark.llm
def test_ask_returns_a_cited_answer_with_its_route_and_run_id(api: RunningApi) -> None:
    (result,) = over_http(
        api,
        KEY_A,
        ("ask", {"question": "How fast does Project Falcon answer routing requests?", "route": "single"}),
    )

    assert not result.is_error, result.content
    answer = result.structured_content
    assert "40" in answer["answer"] and not answer["refused"]
    assert answer["route"] == "single" and len(answer["run_id"]) == 32
    assert any(c["source"].endswith("falcon.md") for c in answer["citations"])


# --- over stdio -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stdio_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("mcp-stdio-home")
    docs = home.parent / "mcp-docs"
    (docs / "public").mkdir(parents=True)
    (docs / "board").mkdir()
    (docs / "public" / "kestrel.md").write_text("# Project Kestrel\n\nKestrel ships drones to 12 cities.\n")
    (docs / "board" / "minutes.md").write_text(
        "# Board minutes\n\nThe board approved buying Kestrel for 9 million.\n"
    )
    settings = load_settings(home=home)
    ingest([docs / "public"], settings, progress=False)
    ingest([docs / "board"], settings, acl=["management"], progress=False)
    yield home


async def _over_stdio(home: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from agent.cli import app; app()", "mcp"],
        env={**os.environ, "RAGPILOT_HOME": str(home), "PYTHONPATH": str(REPO_ROOT)},
        cwd=str(home),
    )
    async with Client(server, read_timeout_seconds=600) as client:
        return [
            await client.list_tools() if name == "list_tools" else await client.call_tool(name, arguments)
            for name, arguments in calls
        ]


def test_ragpilot_mcp_serves_the_tools_over_stdio_as_the_local_user(stdio_home: Path) -> None:
    listed, found, widened = asyncio.run(
        _over_stdio(
            stdio_home,
            [
                ("list_tools", {}),
                ("search_knowledge_base", {"query": "Kestrel"}),
                (
                    "search_knowledge_base",
                    {"query": "board approved buying Kestrel", "groups": ["management"]},
                ),
            ],
        )
    )

    assert {tool.name for tool in listed.tools} == {"search_knowledge_base", "ask", "read_neighbourhood"}
    assert sources(found) and all(s.endswith("kestrel.md") for s in sources(found))
    assert not any(s.endswith("minutes.md") for s in sources(widened))  # user_groups: ["public"]
