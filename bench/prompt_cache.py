"""What the local model's prompt cache (``llm.prompt_cache_mb``) buys: the same HotpotQA questions on the
single-shot route with the cache on, then off, in one process on the same index.

The cached run goes first, so any warm-up (page cache, embedder) favours the uncached run. Reports
latency p50/p95/mean per setting, the answer-contained and refusal rates, and how many answers came
out word for word the same (all of them since ``llama_resume``: a resumed prefix is computed as a
whole evaluation computes it; before, a greedy 1.5B model sometimes worded an answer differently).

    .venv/bin/python bench/prompt_cache.py --limit 20
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from agent.eval.shared_data import shared_data_dir  # noqa: E402

HOTPOT = shared_data_dir() / "hotpotqa" / "hotpot_dev_distractor_first100.json"
OUT = ROOT / "bench" / "results" / "prompt_cache.json"


def _figures(report: Any) -> dict[str, Any]:
    times = [r.total_ms / 1000 for r in report.results]
    return {
        "latency_p50_s": round(statistics.median(times), 2),
        "latency_p95_s": round(sorted(times)[max(0, round(0.95 * len(times)) - 1)], 2),
        "latency_mean_s": round(statistics.fmean(times), 2),
        "contained": report.metrics["contained"],
        "refusal_rate": report.metrics["refusal_rate"],
        "llm_calls_per_question": report.llm_calls_per_question,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--home", type=Path, default=ROOT / ".ragpilot-bench")
    parser.add_argument("--cache-mb", type=int, default=1024)
    args = parser.parse_args()

    from agent.eval.datasets import load_qa_dataset
    from agent.eval.qa import QAEvalConfig, qa_settings, run_qa_eval

    dataset = load_qa_dataset(HOTPOT, "hotpot", limit=args.limit)
    config = QAEvalConfig(dataset=HOTPOT, format="hotpot", limit=args.limit, route="single")
    reports = {}
    for label, cache_mb in (("cache_on", args.cache_mb), ("cache_off", 0)):
        settings = qa_settings(dataset, args.home, llm={"prompt_cache_mb": cache_mb})
        print(f"{label}: {args.limit} HotpotQA questions, single route ...", flush=True)
        reports[label] = run_qa_eval(config, settings, home=args.home, progress=sys.stderr.isatty())
    on, off = reports["cache_on"].results, reports["cache_off"].results
    result = {
        "command": f"python bench/prompt_cache.py --limit {args.limit}",
        "questions": args.limit,
        "cache_on": _figures(reports["cache_on"]),
        "cache_off": _figures(reports["cache_off"]),
        "same_answer": sum(a.answer == b.answer for a, b in zip(on, off, strict=True)),
        "load_average_at_end": os.getloadavg()[0],
    }
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
