"""Trace overhead: the same questions answered without tracing, with tracing, and with tracing + tokens.

Modes (each question runs once per mode per repeat; the order of the modes rotates with the repeat and
the question, so each mode runs first equally often — a question asked again right after is faster,
the model's prompt cache being warm — and load drifts hit all modes alike):
- ``plain``: ``Agent.ask`` (graph updates + values streamed, nothing written);
- ``traced``: ``stream_answer`` without tokens — the JSONL run file written step by step (what every
  CLI/API run does);
- ``traced_tokens``: ``stream_answer`` with the ``messages`` stream on (what chat and SSE do).

Wall times include the local LLM, whose latency varies far more than tracing costs, so the recorder's
own time is also measured directly (time spent inside the recorder and its file writes per run).

    .venv/bin/python bench/trace_overhead.py --repeats 2
Prints a table and writes bench/results/trace_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from agent.agent import Agent  # noqa: E402
from agent.run_loop import FinalAnswer, stream_answer  # noqa: E402
from agent.tracing import recorder as recorder_module  # noqa: E402
from core.settings import load_settings  # noqa: E402
from tools.knowledge_base.ingest import ingest  # noqa: E402

QUESTIONS = [
    "How many days of paid annual leave do Northwind employees get?",
    "HX-200 的额定载重是多少？",
    "How many days of paid sick leave do employees get per year?",
]


MODES = ("plain", "traced", "traced_tokens")


class TimedRecorder(recorder_module.TraceRecorder):
    """The real recorder, with the time spent in its own methods added up."""

    spent_s = 0.0

    def _timed(self, method: Any, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return method(*args)
        finally:
            TimedRecorder.spent_s += time.perf_counter() - start

    def start(self) -> None:
        self._timed(super().start)

    def observe_update(self, update: Any) -> Any:
        return self._timed(super().observe_update, update)

    def finish(self, answer: Any) -> Any:
        return self._timed(super().finish, answer)


def run_once(agent: Agent, question: str, mode: str) -> dict[str, Any]:
    TimedRecorder.spent_s = 0.0
    start = time.perf_counter()
    if mode == "plain":
        answer = agent.ask(question)
    else:
        answer = None
        for event in stream_answer(agent, question, tokens=(mode == "traced_tokens")):
            if isinstance(event, FinalAnswer):
                answer = event.answer
    wall_ms = (time.perf_counter() - start) * 1000.0
    return {
        "mode": mode,
        "question": question,
        "wall_ms": round(wall_ms, 1),
        "recorder_ms": round(TimedRecorder.spent_s * 1000.0, 3) if mode != "plain" else 0.0,
        "llm_calls": answer.llm_calls,
        "answer": answer.answer[:120],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="3 = each mode first once per question")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results" / "trace_overhead.json")
    args = parser.parse_args()

    recorder_module_cls = recorder_module.TraceRecorder
    import agent.run_loop as streaming

    streaming.TraceRecorder = TimedRecorder  # measure the recorder the streaming path really uses
    with tempfile.TemporaryDirectory(prefix="ragpilot-trace-bench-") as home:
        settings = load_settings(home=Path(home))
        ingest([REPO_ROOT / "samples"], settings, progress=False)
        agent = Agent(settings)
        agent.ask("warm-up: how many days of sick leave?")  # load the models outside the measurement
        runs = []
        for repeat in range(args.repeats):
            for index, question in enumerate(QUESTIONS):
                shift = (repeat + index) % len(MODES)
                for mode in MODES[shift:] + MODES[:shift]:
                    result = run_once(agent, question, mode) | {"repeat": repeat}
                    runs.append(result)
                    print(
                        f"{mode:>14}  {result['wall_ms']:>9.0f} ms  recorder {result['recorder_ms']:>7.2f} ms  {question[:50]}"
                    )
        traces = sorted((Path(home) / "traces").glob("*.jsonl"))
        trace_bytes = [p.stat().st_size for p in traces]
        agent.close()
    streaming.TraceRecorder = recorder_module_cls

    summary: dict[str, Any] = {}
    for mode in MODES:
        walls = [r["wall_ms"] for r in runs if r["mode"] == mode]
        recorders = [r["recorder_ms"] for r in runs if r["mode"] == mode]
        summary[mode] = {
            "runs": len(walls),
            "wall_ms_median": round(statistics.median(walls), 1),
            "wall_ms_mean": round(statistics.fmean(walls), 1),
            "recorder_ms_median": round(statistics.median(recorders), 3),
            "recorder_ms_max": round(max(recorders), 3),
        }
    plain = summary["plain"]["wall_ms_median"]
    for mode in ("traced", "traced_tokens"):
        summary[mode]["wall_overhead_pct_vs_plain"] = round(
            (summary[mode]["wall_ms_median"] / plain - 1) * 100, 2
        )
    result = {
        "questions": QUESTIONS,
        "repeats": args.repeats,
        "summary": summary,
        "trace_file_bytes_median": int(statistics.median(trace_bytes)) if trace_bytes else 0,
        "load_average_at_end": list(os.getloadavg()),
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(summary, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
