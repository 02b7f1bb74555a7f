"""What each door costs on top of ragpilot's own ``/ask`` (issue 23): the same questions through
``POST /ask``, ``POST /ask/stream`` (read to the answer event), ``POST /v1/chat/completions`` (plain and
``stream: true``, with the real ``openai`` SDK) and the MCP ``ask`` tool over streamable HTTP (the real
``mcp`` SDK client, one session per call as a tool-using agent makes it).

The server is the real one on 127.0.0.1 over the real embedded index of ``samples/`` and the real local
embedder. By default its LLM is the fake OpenAI-compatible server (``auto_reply``: instant, the same
replies every time), so the run time is ragpilot's and the differences are the doors'; ``--local-llm``
uses the bundled GGUF instead (slow; the doors' overhead is then within the model's noise). Questions
and doors are interleaved (each round asks every question through every door, in a rotated order), so
load drifts hit every door alike. Reported per door: p50 / p95 wall time, and the median of the paired
differences to ``/ask`` on the same question and round.

    .venv/bin/python -m bench.surface_overhead --rounds 5     # saves bench/results/surface_overhead.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.settings import load_settings  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fakes.running_api import serve_in_thread  # noqa: E402
from tools.knowledge_base.ingest import ingest  # noqa: E402

QUESTIONS = [
    "How many days of annual leave do Northwind employees get?",
    "How many unused leave days can be carried over?",
    "每台 HX-200 的电池续航是多少？",
    "HX-200 的额定载重是多少？",
    "What changed in the latest release?",
    "Who do I tell when I lose my badge?",
]
KEY = "bench-key"
RESULT = ROOT / "bench" / "results" / "surface_overhead.json"


def ask(base: str, question: str) -> None:
    response = httpx.post(
        f"{base}/ask", json={"question": question, "route": "single"}, headers={"X-API-Key": KEY}, timeout=600
    )
    response.raise_for_status()


def ask_stream(base: str, question: str) -> None:
    with httpx.stream(
        "POST",
        f"{base}/ask/stream",
        json={"question": question, "route": "single"},
        headers={"X-API-Key": KEY},
        timeout=600,
    ) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("event: answer"):
                return
    raise RuntimeError("no answer event")


def openai_client(base: str) -> Any:
    import openai

    return openai.OpenAI(base_url=f"{base}/v1", api_key=KEY, max_retries=0, timeout=600)


def chat_completion(base: str, question: str) -> None:
    reply = openai_client(base).chat.completions.create(
        model="ragpilot-single", messages=[{"role": "user", "content": question}]
    )
    assert reply.choices[0].message.content


def chat_completion_stream(base: str, question: str) -> None:
    stream = openai_client(base).chat.completions.create(
        model="ragpilot-single", messages=[{"role": "user", "content": question}], stream=True
    )
    assert any(chunk.choices and chunk.choices[0].finish_reason for chunk in stream)


def mcp_ask(base: str, question: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def call() -> None:
        async with (
            httpx2.AsyncClient(headers={"X-API-Key": KEY}, timeout=600) as http,
            Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool("ask", {"question": question, "route": "single"})
            assert not result.is_error, result.content

    asyncio.run(call())


DOORS: dict[str, Callable[[str, str], None]] = {
    "/ask": ask,
    "/ask/stream": ask_stream,
    "/v1/chat/completions": chat_completion,
    "/v1/chat/completions stream": chat_completion_stream,
    "mcp ask (HTTP)": mcp_ask,
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--local-llm", action="store_true", help="the bundled GGUF instead of the fake LLM")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()

    with (
        tempfile.TemporaryDirectory(prefix="ragpilot-surfaces-") as tmp,
        FakeOpenAIServer(auto_reply=True) as fake,
    ):
        llm = {} if args.local_llm else {"provider": "openai", "base_url": fake.base_url, "model": "fake"}
        settings = load_settings(home=Path(tmp), llm=llm, server={"api_keys": {KEY: ["public"]}})
        ingest([ROOT / "samples"], settings, progress=False)
        with serve_in_thread(settings) as (base, _app):
            for door in DOORS.values():  # warm-up: models loaded, connections made, nothing measured
                door(base, QUESTIONS[0])
            times: dict[str, list[float]] = {name: [] for name in DOORS}
            paired: dict[str, list[float]] = {name: [] for name in DOORS}
            names = list(DOORS)
            for round_ in range(args.rounds):
                for i, question in enumerate(QUESTIONS):
                    shift = (round_ + i) % len(names)
                    measured: dict[str, float] = {}
                    for name in names[shift:] + names[:shift]:
                        start = time.perf_counter()
                        DOORS[name](base, question)
                        measured[name] = (time.perf_counter() - start) * 1000
                        times[name].append(measured[name])
                    for name in names:
                        paired[name].append(measured[name] - measured["/ask"])
                print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
    base_p50 = statistics.median(times["/ask"])
    doors = {
        name: {
            "n": len(values),
            "p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(percentile(values, 0.95), 1),
            "p50_ratio_to_ask": round(statistics.median(values) / base_p50, 3),
            "median_paired_overhead_ms": round(statistics.median(paired[name]), 1),
        }
        for name, values in times.items()
    }
    result = {
        "llm": "local GGUF" if args.local_llm else "fake OpenAI-compatible server (auto_reply)",
        "rounds": args.rounds,
        "questions": QUESTIONS,
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "doors": doors,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(doors, indent=2))


if __name__ == "__main__":
    main()
