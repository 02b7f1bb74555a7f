"""Offline reranker: experiments and the final measurement (issue 3, "Done when").

Run from the repository root:

    .venv/bin/python -m bench.rerank                 # everything below, saved to bench/results/rerank.json
    .venv/bin/python -m bench.rerank --skip-xcorpus  # SciFact only

Signals are the project's own: BM25 with the shared ``SparseEncoder`` (its weights, Qdrant's IDF
formula) and e5 cosines from the bench embedding cache (``.ragpilot-bench/embeddings.sqlite``, the
same ``"{title}\\n{text}"`` index text a one-chunk document gets). Legs are fused exactly as
``hybrid_search`` does (weighted RRF over each leg's top ``leg_depth``), so the reranker sees the lists
it sees in production; the reranker itself runs through ``OfflineReranker`` (the shipped class and
weights), so its latency is measured end to end (query embedding, cache look-ups, features, trees).

What it reports: nDCG@10, Recall@10/100, MRR@10, P@5 (ranx) on SciFact *test* for sparse, dense,
hybrid (RRF k=60, the default), RRF k=10, and hybrid + offline rerank, a paired t-test of the rerank
against plain RRF, single-feature and feature-group ablations (5-fold CV on *train*), and the same
comparison on two corpora the reranker never saw (SQuAD dev, CMRC 2018 trial: question -> paragraph).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tools.rerank.offline import FEATURE_NAMES  # noqa: E402

RESULTS = REPO / "bench" / "results" / "rerank.json"

from bench.rerank_candidates import (  # noqa: E402
    BENCH_HOME,
    CANDIDATES,
    DATA,
    FEATURE_GROUPS,
    LEG_DEPTH,
    REPO,
    RRF_K,
    CandidateBuilder,
    Candidates,
    Dataset,
    Signals,
    compare_runs,
    e5_signals,
    evaluate_run,
    fused_list,
    load_beir,
    load_cmrc,
    load_squad,
    ndcg10,
    rescored_run,
    run_from_order,
    single_leg_list,
    to_hits,
)
from bench.train_offline_reranker import cross_validate, load_params  # noqa: E402


# ------------------------------------------------------------------------------------------ latency
def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def _ms(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 50) * 1000, 2),
        "p95_ms": round(percentile(values, 95) * 1000, 2),
        "mean_ms": round(statistics.fmean(values) * 1000, 2),
    }


# ------------------------------------------------------------------------------------- experiments
def single_feature_table(qrels, ds: Dataset, cands: Sequence[Candidates]) -> dict[str, float]:
    """nDCG@10 of ordering the candidates by one feature (higher first; ranks and positions lower first)."""
    lower_is_better = {"fused_position_log", "dense_rank_log", "sparse_rank_log", "passage_length_log"}
    out = {}
    for i, name in enumerate(FEATURE_NAMES):
        sign = -1.0 if name in lower_is_better else 1.0
        out[name] = ndcg10(qrels, rescored_run(ds, cands, lambda x, i=i, s=sign: s * x[:, i]))
    return out


def ablation_table(qrels, ds: Dataset, cands: Sequence[Candidates], params: dict) -> dict[str, float]:
    """5-fold CV nDCG@10 on train of LambdaMART over growing feature groups."""
    combos = [
        ["fusion"],
        ["fusion", "dense"],
        ["fusion", "dense", "dense_prf"],
        ["fusion", "dense", "lexical"],
        ["fusion", "dense", "dense_prf", "lexical"],
    ]
    out = {}
    for combo in combos:
        names = [n for g in combo for n in FEATURE_GROUPS[g]]
        out["+".join(combo)] = round(cross_validate(qrels, ds, cands, names, params)["cv_ndcg@10"], 4)
    return out


def rerank_with_shipped_model(
    ds: Dataset, cands: Sequence[Candidates], home: Path, check_skew: bool = True
) -> tuple[dict, list[float]]:
    """Run the shipped ``OfflineReranker`` on each query's first CANDIDATES hits; returns the run and the
    per-query rerank latency (query embedding, cache look-ups, features and trees)."""
    from core.settings import load_settings
    from tools.providers.embedder_factory import get_local_e5_embedder
    from tools.rerank.offline import OfflineReranker

    settings = load_settings(home=home)
    reranker = OfflineReranker(
        settings.rerank,
        embedder=get_local_e5_embedder(settings),
        vector_cache_path=settings.home / "embeddings.sqlite",
    )
    run, latencies = {}, []
    if check_skew and reranker.model.feedback_trees is None:
        # Training and run time must compute the same features: compare on the first queries.
        for c in cands[:20]:
            at_run_time = reranker.features(ds.queries[c.query_id], to_hits(ds, c.fused[:CANDIDATES]))
            if not np.allclose(at_run_time, c.features, atol=1e-5):
                worst = int(np.abs(at_run_time - c.features).max(axis=0).argmax())
                raise SystemExit(f"train/run-time feature skew on query {c.query_id}: {FEATURE_NAMES[worst]}")
    for c in cands:
        hits = to_hits(ds, c.fused[:CANDIDATES])
        start = time.perf_counter()
        ranked = reranker.rerank(ds.queries[c.query_id], hits, top_n=CANDIDATES)
        latencies.append(time.perf_counter() - start)
        position = {h.chunk_id: o for o, h in enumerate(hits)}
        run[c.query_id] = run_from_order(ds, c.fused, [position[h.chunk_id] for h in ranked])
    return run, latencies


def first_stage_runs(
    ds: Dataset, sig: Signals, query_ids: Sequence[str]
) -> dict[str, dict[str, dict[str, float]]]:
    row = {q: i for i, q in enumerate(sig.query_ids)}
    runs: dict[str, dict[str, dict[str, float]]] = {
        "sparse": {},
        "dense": {},
        "hybrid_rrf60": {},
        "hybrid_rrf10": {},
    }
    for q in query_ids:
        i = row[q]
        lists = {
            "sparse": single_leg_list(sig.bm25[i], "sparse"),
            "dense": single_leg_list(sig.dense[i], "dense"),
            "hybrid_rrf60": fused_list(sig.dense[i], sig.bm25[i], rrf_k=60),
            "hybrid_rrf10": fused_list(sig.dense[i], sig.bm25[i], rrf_k=10),
        }
        for name, fused in lists.items():
            runs[name][q] = run_from_order(ds, fused, range(len(fused)))
    return runs


def measure(ds: Dataset, split: str, with_ablation: bool, train_split: str | None = None) -> dict:
    """First-stage runs, the shipped reranker, significance, and (optionally) train-CV ablations."""
    t0 = time.perf_counter()
    sig = e5_signals(ds)
    qrels = ds.qrels[split]
    query_ids = [q for q in sig.query_ids if q in qrels]
    builder = CandidateBuilder(ds, sig)
    cands = builder.build(query_ids, qrels)
    runs = first_stage_runs(ds, sig, query_ids)
    rerank_run, latencies = rerank_with_shipped_model(ds, cands, BENCH_HOME)
    runs["hybrid_rrf60+offline_rerank"] = rerank_run
    # Robustness: legs 100 deep (what 'ragpilot eval retrieval --top-k 100' searches) vs 50 in training.
    deep = [
        Candidates(c.query_id, fused_list(sig.dense[builder.row[c.query_id]], sig.bm25[builder.row[c.query_id]],
                                          leg_depth=100), c.features, c.labels)
        for c in cands
    ]  # fmt: skip
    runs["hybrid_rrf60_legs100+offline_rerank"], _ = rerank_with_shipped_model(
        ds, deep, BENCH_HOME, check_skew=False
    )
    result: dict = {
        "dataset": ds.name,
        "split": split,
        "queries": len(query_ids),
        "passages": len(ds.docs),
        "metrics": {name: evaluate_run(qrels, run) for name, run in runs.items()},
        "paired_t_test_vs_hybrid_rrf60": compare_runs(qrels, runs, "hybrid_rrf60"),
        "rerank_latency": _ms(latencies),
        "candidates": CANDIDATES,
        "leg_depth": LEG_DEPTH,
        "rrf_k": RRF_K,
    }
    if with_ablation and train_split:
        train_qrels = ds.qrels[train_split]
        train_ids = [q for q in sig.query_ids if q in train_qrels]
        train_cands = builder.build(train_ids, train_qrels)
        result["train_single_feature_ndcg@10"] = single_feature_table(train_qrels, ds, train_cands)
        result["train_cv_ablation_ndcg@10"] = ablation_table(train_qrels, ds, train_cands, load_params())
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-xcorpus", action="store_true", help="SciFact only")
    parser.add_argument("--skip-ablation", action="store_true", help="no train-CV ablation tables")
    args = parser.parse_args(argv)
    results: dict = {"scifact": measure(load_beir(DATA / "scifact"), "test", not args.skip_ablation, "train")}
    print(json.dumps(results["scifact"]["metrics"], indent=1), flush=True)
    if not args.skip_xcorpus:
        for loader in (load_squad, load_cmrc):
            ds = loader()
            results[ds.name] = measure(ds, "test", with_ablation=False)
            print(ds.name, json.dumps(results[ds.name]["metrics"], indent=1), flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    print(f"saved {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
