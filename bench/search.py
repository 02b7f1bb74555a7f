"""Latency of hybrid search, p50/p95, without the query embedding (vectors precomputed) and with it.

Two corpora:
- SciFact as indexed by ``ragpilot eval retrieval`` (5,183 real abstracts, real e5 + BM25 vectors),
  queried with its 300 test claims;
- a synthetic collection of N chunks (default 100,000) in a temporary store built with the store API:
  random unit dense vectors, and sparse BM25 vectors whose terms are drawn from SciFact's own term
  frequencies (so real queries hit real posting lists of realistic length). The same SciFact claims
  query it: "with embedding" embeds the claim for real; "without" uses precomputed vectors.
Every query goes through ``tools.search`` (ACL + kind filter, hybrid weighted RRF, leg ranks), with
the default search settings. The HNSW optimizer is not run (see offline-models.md): exact search.

    .venv/bin/python bench/search.py [--synthetic 100000] [--queries 300] [--skip-scifact]

Prints and saves ``bench/results/search.json`` and the plot ``bench/results/search.png``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent.eval.retrieval import LatencyStats, eval_settings, load_beir  # noqa: E402
from agent.eval.shared_data import shared_data_dir  # noqa: E402
from core.settings import Settings, load_settings  # noqa: E402
from tools.knowledge_base.knowledge_base import KnowledgeBase  # noqa: E402
from tools.knowledge_base.records import Chunk  # noqa: E402
from tools.knowledge_base.sparse import (  # noqa: E402
    SparseEncoder,
    SparseVec,  # noqa: E402
    term_id,
    tokenize,
)
from tools.knowledge_base.store.factory import open_store  # noqa: E402
from tools.search import SearchRequest, encode_queries, search_encoded  # noqa: E402

RESULTS = REPO / "bench" / "results"
DEFAULT_BEIR = shared_data_dir() / "scifact"
WARMUP_QUERIES = 5
SYNTHETIC_DOC_TOKENS = 180  # the stemmed, stop-word-free length of a typical SciFact abstract
SYNTHETIC_CHUNKS_PER_DOC = 1000  # one commit per 1,000 chunks keeps the build fast


def measure(kb: KnowledgeBase, queries: list[str], groups: list[str]) -> dict[str, Any]:
    """Per query: encode (embedding + BM25 query) then search; both timings, p50/p95. The single legs
    (dense only, BM25 only) are timed too, on the same precomputed vectors, to show where time goes."""
    load_before = os.getloadavg()[0]
    template = SearchRequest(queries=["-"], mode="hybrid")
    with_embedding, without_embedding, hits_returned = [], [], []
    leg_times: dict[str, list[float]] = {"dense": [], "sparse": []}
    for i, text in enumerate(queries):
        search = template.model_copy(update={"queries": [text]}).resolved(kb.settings.search)
        started = time.perf_counter()
        encoded = encode_queries(search, kb)
        encoded_at = time.perf_counter()
        hits = search_encoded(search, kb, groups, encoded)
        finished = time.perf_counter()
        for leg in leg_times:
            leg_started = time.perf_counter()
            search_encoded(replace(search, mode=leg), kb, groups, encoded)
            leg_times[leg].append(time.perf_counter() - leg_started)
        if i < WARMUP_QUERIES:
            for leg in leg_times:
                leg_times[leg].pop()
            continue
        with_embedding.append(finished - started)
        without_embedding.append(finished - encoded_at)
        hits_returned.append(len(hits))
    resolved = template.resolved(kb.settings.search)
    return {
        "points": kb.store.count(),
        "queries": len(with_embedding),
        "mode": resolved.mode,
        "top_k": resolved.top_k,
        "leg_depth": resolved.leg_depth,
        "rrf_k": resolved.rrf_k,
        "mean_hits": float(np.mean(hits_returned)) if hits_returned else 0.0,
        "without_embedding": LatencyStats.of(without_embedding).model_dump(),
        "with_embedding": LatencyStats.of(with_embedding).model_dump(),
        "dense_leg_only": LatencyStats.of(leg_times["dense"]).model_dump(),
        "sparse_leg_only": LatencyStats.of(leg_times["sparse"]).model_dump(),
        "load_avg_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def bench_scifact(beir_dir: Path, home: Path, queries: list[str]) -> dict[str, Any]:
    settings = eval_settings(load_beir(beir_dir, "test"), home)
    with KnowledgeBase.open(settings) as kb:
        if kb.store.count() == 0:
            raise SystemExit(
                f"no SciFact index under {settings.index_dir}: build it first with "
                f"`ragpilot eval retrieval --beir {beir_dir} --home {home}`"
            )
        return {"corpus": "scifact", **measure(kb, queries, settings.user_groups)}


def term_distribution(corpus_path: Path, limit_docs: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Term ids and their probabilities, from the BM25 tokens of the first SciFact abstracts."""
    counts: Counter[int] = Counter()
    with gzip.open(corpus_path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            if n >= limit_docs:
                break
            record = json.loads(line)
            counts.update(term_id(t) for t in tokenize(f"{record['title']}\n{record['text']}"))
    terms = np.array(list(counts), dtype=np.int64)
    freqs = np.array([counts[t] for t in terms], dtype=np.float64)
    return terms, freqs / freqs.sum()


def synthetic_chunks(start: int, count: int, doc_id: str) -> list[Chunk]:
    return [
        Chunk(
            chunk_id=f"{doc_id}::c{i}",
            doc_id=doc_id,
            source=f"synthetic/{doc_id}",
            title=f"synthetic {doc_id}",
            text=f"synthetic chunk {i}",
            position=i - start,
            acl=["public"],
            chunker="synthetic",
        )  # fmt: skip
        for i in range(start, start + count)
    ]


def synthetic_sparse(
    rng: np.random.Generator, terms: np.ndarray, probs: np.ndarray, n: int
) -> list[SparseVec]:
    encoder = SparseEncoder()
    vectors = []
    for _ in range(n):
        sampled = rng.choice(terms, size=SYNTHETIC_DOC_TOKENS, p=probs)
        tf = Counter(int(t) for t in sampled)
        norm = encoder.k1 * (1 - encoder.b + encoder.b * SYNTHETIC_DOC_TOKENS / encoder.avgdl)
        indices = sorted(tf)
        vectors.append(SparseVec(indices, [tf[t] * (encoder.k1 + 1) / (tf[t] + norm) for t in indices]))
    return vectors


def build_synthetic(settings: Settings, size: int, corpus_path: Path, embedder: Any) -> float:
    """Write ``size`` synthetic chunks through the store API; returns the build time in seconds."""
    rng = np.random.default_rng(42)
    terms, probs = term_distribution(corpus_path)
    started = time.perf_counter()
    store = open_store(settings)
    try:
        store.ensure_collection(embedder.dim, embedder.name)
        for doc, start in enumerate(range(0, size, SYNTHETIC_CHUNKS_PER_DOC)):
            count = min(SYNTHETIC_CHUNKS_PER_DOC, size - start)
            dense = rng.standard_normal((count, embedder.dim)).astype(np.float32)
            dense /= np.linalg.norm(dense, axis=1, keepdims=True)
            doc_id = f"doc{doc}"
            store.upsert(synthetic_chunks(start, count, doc_id), dense, synthetic_sparse(rng, terms, probs, count),
                         doc_version="v1")  # fmt: skip
            store.commit_document(doc_id, "v1")
            print(f"  synthetic: {start + count:,}/{size:,} points", file=sys.stderr, end="\r")
        print(file=sys.stderr)
    finally:
        store.close()
    return time.perf_counter() - started


def bench_synthetic(size: int, beir_dir: Path, queries: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragpilot-bench-search-") as tmp:
        settings = load_settings(home=Path(tmp), qdrant={"collection": "synthetic"})
        from tools.providers.embedder_factory import get_local_e5_embedder

        embedder = get_local_e5_embedder(settings)
        build_seconds = build_synthetic(settings, size, beir_dir / "corpus.jsonl.gz", embedder)
        with KnowledgeBase.open(settings, embedder=embedder) as kb:
            result = measure(kb, queries, ["public"])
    return {"corpus": f"synthetic {size:,}", "build_seconds": round(build_seconds, 1), **result}


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['corpus']}\n({r['points']:,} points)" for r in results]
    x = np.arange(len(results))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bars = [
        ("without embedding p50", "without_embedding", "p50_ms", -0.3),
        ("without embedding p95", "without_embedding", "p95_ms", -0.1),
        ("with embedding p50", "with_embedding", "p50_ms", 0.1),
        ("with embedding p95", "with_embedding", "p95_ms", 0.3),
    ]
    for label, part, stat, offset in bars:
        values = [r[part][stat] for r in results]
        drawn = ax.bar(x + offset, values, width=0.2, label=label)
        ax.bar_label(drawn, fmt="%.1f", fontsize=7)
    ax.set_xticks(x, labels)
    ax.set_ylabel("milliseconds per query (log scale)")
    ax.set_yscale("log")
    ax.set_title("ragpilot hybrid search latency (weighted RRF, ACL filter, exact search, 2 CPU cores)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR, help="the SciFact BEIR folder")
    parser.add_argument(
        "--home", type=Path, default=REPO / ".ragpilot-bench", help="home of the SciFact index"
    )
    parser.add_argument(
        "--synthetic", type=int, nargs="*", default=[100_000], help="synthetic collection sizes"
    )
    parser.add_argument(
        "--queries", type=int, default=300, help="SciFact test claims to run (after 5 warm-ups)"
    )
    parser.add_argument("--skip-scifact", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "search.json")
    args = parser.parse_args()

    beir = load_beir(args.beir, "test")
    queries = list(beir.queries.values())[: args.queries]
    results = []
    if not args.skip_scifact:
        results.append(bench_scifact(args.beir, args.home, queries))
        print(json.dumps(results[-1]))
    for size in args.synthetic:
        results.append(bench_synthetic(size, args.beir, queries))
        print(json.dumps(results[-1]))
    report = {
        "benchmark": "hybrid search latency",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_avg": os.getloadavg()},
        "notes": "without_embedding = store query + fusion + hit building (dense and BM25 query vectors precomputed); "
        "with_embedding adds the e5 query embedding and BM25 query encoding; dense_leg_only / sparse_leg_only "
        "time one leg alone on the same vectors. No HNSW optimisation (exact search). Shared 2-core machine: "
        "load_avg_1min (before, after) shows how busy it was; other jobs inflate every figure.",
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    plot(results, args.out.with_suffix(".png"))
    print(f"saved {args.out} and {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
