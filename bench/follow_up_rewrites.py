"""How often does ``contextualize`` turn a follow-up into the standalone question it stands for?

The follow-up benchmark (``bench/follow_ups.py``) judges whole turns (38 minutes a run) over ten
documents of its own. This script judges only the rewrite, over conversations it has never seen:
``bench/data/follow_up_rewrites.jsonl`` holds two-turn histories written for other domains
(clinics, bridges, tennis, tea gardens, car batteries …), in English and Chinese, in four patterns:

- **pronoun** ("Where did she study?", "它是哪年开放的？") — the rewrite must name the referent;
- **ellipsis** ("And on Sundays?", "上海的呢？") — it must carry the new slot;
- **what_else** ("Any others?", "还有别的吗？") — it must keep the topic;
- **standalone** ("Where is the nearest pharmacy?") — nothing to resolve: it must keep its own topic and
  must not pull in the previous one.

A case passes when the rewrite contains one of ``expect`` and none of ``forbid``.
It runs the shipped node with the configured chat model (the bundled one by default), one LLM call a
case, about two seconds each on two cores.

    .venv/bin/python -m bench.follow_up_rewrites [--tag T] [--set graph.x=v]
        # saves bench/results/follow_up_rewrites[_T].json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402

from core.settings import load_settings  # noqa: E402
from graphs.rag.nodes.contextualize import contextualize  # noqa: E402
from graphs.rag.resources import Resources  # noqa: E402

CASES = REPO / "bench" / "data" / "follow_up_rewrites.jsonl"
RESULTS = REPO / "bench" / "results"


def load_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CASES.read_text("utf-8").splitlines() if line.strip()]


def passes(case: dict[str, Any], rewrite: str) -> bool:
    text = rewrite.lower()
    return any(w.lower() in text for w in case["expect"]) and not any(
        w.lower() in text for w in case.get("forbid", [])
    )


def rewrite_of(case: dict[str, Any], resources: Resources) -> dict[str, Any]:
    messages: list[Any] = []
    for question, answer in case["history"]:
        messages += [HumanMessage(question), AIMessage(answer)]
    messages.append(HumanMessage(case["latest"]))
    state = {"question": case["latest"], "messages": messages}
    start = time.perf_counter()
    update = contextualize(state, {}, resources=resources)
    seconds = round(time.perf_counter() - start, 2)
    rewrite = update["standalone_question"]
    decision = update["steps"][-1]["decision"]
    return {"id": case["id"], "language": case["language"], "pattern": case["pattern"],
            "latest": case["latest"], "rewrite": rewrite, "passed": passes(case, rewrite),
            "fallback": decision.get("fallback"), "llm_calls": decision.get("llm_calls", 0),
            "seconds": seconds}  # fmt: skip


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        groups[row["pattern"]].append(row["passed"])
        groups[row["language"]].append(row["passed"])
    return {
        "passed": sum(r["passed"] for r in rows),
        "cases": len(rows),
        "by_group": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(groups.items())},
        "llm_calls_per_case": round(sum(r["llm_calls"] for r in rows) / max(len(rows), 1), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", default="")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting override, e.g. graph.history_turns=2")  # fmt: skip
    args = parser.parse_args()
    for override in args.set:
        key, _, value = override.partition("=")
        os.environ["RAGPILOT_" + key.upper().replace(".", "__")] = value
    resources = Resources(load_settings())
    load_before = os.getloadavg()
    start = time.perf_counter()
    rows = []
    for case in load_cases():
        rows.append(rewrite_of(case, resources))
        mark = "ok " if rows[-1]["passed"] else "BAD"
        print(f"{mark} {case['id']}: {case['latest']} -> {rows[-1]['rewrite']}", flush=True)
    result = {
        "summary": summary(rows),
        "command": "python -m bench.follow_up_rewrites " + " ".join(sys.argv[1:]),
        "seconds": round(time.perf_counter() - start, 1),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "results": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"follow_up_rewrites{'_' + args.tag if args.tag else ''}.json"
    out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(json.dumps(result["summary"], ensure_ascii=False), "->", out.relative_to(REPO))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
