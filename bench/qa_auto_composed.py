"""HotpotQA ``auto`` figures composed from the ``single`` and ``iterative`` runs, question by question.

The local router is deterministic and cheap, so instead of a third hour-long run this asks it where
each of the 100 questions would go and takes that question's result from the run of that route. The
output says it is composed; a real ``--route auto`` run (``bench.qa --only hotpot_auto``) remains the
reference and can be compared with it. Questions routed ``direct`` have no run to take a result from
and are counted separately.

    .venv/bin/python -m bench.qa_auto_composed
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

from agent.eval.shared_data import shared_data_dir

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
HOTPOT = shared_data_dir() / "hotpotqa" / "hotpot_dev_distractor_first100.json"


def main() -> int:
    from agent.eval.datasets import load_qa_dataset
    from core.settings import load_settings
    from graphs.rag.classifier.local import FeatureComplexityClassifier

    runs = {
        route: {r["qid"]: r for r in json.loads((RESULTS / f"qa_hotpot_{route}.json").read_text())["results"]}
        for route in ("single", "iterative")
    }
    dataset = load_qa_dataset(HOTPOT, "hotpot", limit=len(runs["single"]))
    router = FeatureComplexityClassifier.from_settings(load_settings())
    chosen = {example.qid: router.classify(example.question).route for example in dataset.examples}
    results = [runs[route][qid] for qid, route in chosen.items() if route in runs]
    n = len(results)

    def mean(key: str) -> float:
        return round(sum(float(r[key] or 0) for r in results) / n, 4)

    seconds = sorted(r["total_ms"] / 1000 for r in results)
    report = {
        "composed": "per question from qa_hotpot_single.json / qa_hotpot_iterative.json by the local router",
        "questions": n,
        "routes": dict(Counter(chosen.values())),
        "not_composable_direct": sum(1 for route in chosen.values() if route not in runs),
        "metrics": {
            "em": mean("em"),
            "f1": mean("f1"),
            "contained": mean("contained"),
            "refusal_rate": mean("refused"),
            "supporting_recall@10": mean("supporting_recall"),
        },  # fmt: skip
        "llm_calls_per_question": mean("llm_calls"),
        "latency_p50_s": round(statistics.median(seconds), 2),
        "latency_p95_s": round(seconds[max(0, round(0.95 * n) - 1)], 2),
    }
    (RESULTS / "qa_hotpot_auto_composed.json").write_text(
        json.dumps(report, indent=1) + "\n", encoding="utf-8"
    )
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
