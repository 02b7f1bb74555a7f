"""Does what was fitted on SciFact carry to corpora it was not fitted on? (issue 22, item 2)

Retrieval sets derived from the shared QA files (``agent/eval/beir_from_qa.py``: question -> its gold
paragraph among all the others; SQuAD, HotpotQA, CMRC 2018, RGB) are searched with the default hybrid
search, then with each reranker choice over the same fused lists. Reported per set and choice: nDCG@10,
Recall@5, Recall@10, MRR@10, and against no rerank the per-query nDCG@10 wins / losses and a paired
t-test (ranx). The offline reranker was fitted on SciFact train only, so every set here is held out for
it. With ``--split calibration|report`` the queries of each set are halved by a seeded shuffle: choose
on the calibration half, report on the other.

    .venv/bin/python -m bench.retrieval_heldout                      # all four sets, saves bench/results/retrieval_heldout_all.json
    .venv/bin/python -m bench.retrieval_heldout --sets squad cmrc --rerank none offline offline@0.5
    (``offline@W``: the offline reranker with ``rerank.fusion_weight`` W)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.eval.beir_from_qa import HELDOUT_SETS, derive_beir_set  # noqa: E402
from agent.eval.retrieval import (  # noqa: E402
    RetrievalEvalConfig,
    default_bench_home,
    eval_settings,
    load_beir,
    run_retrieval_eval,
)
from agent.eval.shared_data import shared_data_dir  # noqa: E402

SHARED_DATA = shared_data_dir()
RESULTS = ROOT / "bench" / "results"
METRICS = ["ndcg@10", "recall@5", "recall@10", "mrr@10"]
QUERIES_PER_SET = {"squad": 600, "hotpotqa": 100, "cmrc": 600, "rgb": 300}


def split_queries(query_ids: list[str], split: str, seed: int = 0) -> list[str]:
    """All queries, or one half of a seeded shuffle ('calibration' / 'report')."""
    if split == "all":
        return query_ids
    shuffled = sorted(query_ids)
    random.Random(seed).shuffle(shuffled)
    half = len(shuffled) // 2
    return shuffled[:half] if split == "calibration" else shuffled[half:]


def evaluate(beir: Any, run: Any, query_ids: list[str]) -> tuple[dict[str, float], dict[str, float]]:
    """Mean metrics and per-query nDCG@10 of ``run`` over ``query_ids``."""
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    qrels = Qrels({q: beir.qrels[q] for q in query_ids})
    sub = Run({q: dict(run[q]) or {"__no_hit__": 0.0} for q in query_ids})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        means = ranx_evaluate(qrels, sub, METRICS)
        per_query = ranx_evaluate(qrels, sub, "ndcg@10", return_mean=False)
    return {m: round(float(means[m]), 4) for m in METRICS}, dict(
        zip(query_ids, map(float, per_query), strict=True)
    )


def paired(base: dict[str, float], other: dict[str, float]) -> dict[str, Any]:
    from scipy.stats import ttest_rel

    queries = sorted(base)
    a = [base[q] for q in queries]
    b = [other[q] for q in queries]
    wins = sum(1 for x, y in zip(a, b, strict=True) if y > x + 1e-9)
    losses = sum(1 for x, y in zip(a, b, strict=True) if y < x - 1e-9)
    p = float(ttest_rel(b, a).pvalue) if wins + losses else 1.0
    mean_a = sum(a) / len(a)
    return {
        "ndcg@10_change": round((sum(b) - sum(a)) / len(a), 4),
        "ndcg@10_change_relative": round((sum(b) / len(b) - mean_a) / mean_a, 4) if mean_a else None,
        "queries_better": wins,
        "queries_worse": losses,
        "paired_t_p": round(p, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(HELDOUT_SETS), choices=HELDOUT_SETS)
    parser.add_argument("--rerank", nargs="+", default=["none", "offline"])
    parser.add_argument("--split", choices=["all", "calibration", "report"], default="all")
    parser.add_argument(
        "--home", type=Path, default=None, help="evaluation indexes (default <data dir>/bench)"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="default bench/results/retrieval_heldout_<split>.json"
    )
    args = parser.parse_args()

    home = args.home or default_bench_home()
    args.out = args.out or RESULTS / f"retrieval_heldout_{args.split}.json"
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    results.setdefault("sets", {})
    for name in args.sets:
        beir_dir = home / "heldout" / name
        if not (beir_dir / "qrels" / "test.tsv").exists():
            derived = derive_beir_set(name, SHARED_DATA, beir_dir, queries=QUERIES_PER_SET[name])
            print(f"{name}: {derived.documents} documents, {derived.queries} queries", file=sys.stderr)
        beir = load_beir(beir_dir, "test")
        settings = eval_settings(beir, home)
        query_ids = split_queries(list(beir.queries), args.split)
        entry: dict[str, Any] = {
            "documents": None,
            "queries": len(query_ids),
            "split": args.split,
            "runs": {},
        }
        per_query: dict[str, dict[str, float]] = {}
        for choice in args.rerank:
            started = time.perf_counter()
            # "offline@0.5": the offline reranker with rerank.fusion_weight 0.5
            provider, _, weight = choice.partition("@")
            run_settings = settings.model_copy(
                update={
                    "rerank": settings.rerank.model_copy(update={"fusion_weight": float(weight or 0)})
                }  # "offline" alone: 0
            )
            report, run = run_retrieval_eval(
                RetrievalEvalConfig(beir_dir=beir_dir, rerank=provider), run_settings, progress=False
            )
            metrics, per_query[choice] = evaluate(beir, run, query_ids)
            entry["documents"] = report.index_documents
            entry["runs"][choice] = {
                "metrics": metrics,
                "rerank_p50_ms": report.latency_rerank.p50_ms if report.latency_rerank else None,
                "seconds": round(time.perf_counter() - started, 1),
            }
            if choice != "none" and "none" in per_query:
                entry["runs"][choice]["against_none"] = paired(per_query["none"], per_query[choice])
            print(f"{name} {choice}: {metrics}", file=sys.stderr)
        results["sets"][f"{name}:{args.split}"] = entry
        results["load_average_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(results, indent=2, ensure_ascii=False) + "\n"
        )  # after each set: resumable
    print(json.dumps(results["sets"], indent=2))


if __name__ == "__main__":
    main()
