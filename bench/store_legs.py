"""What reporting each leg's rank and score costs in EdgeStore's hybrid query.

``EdgeStore.query(mode="hybrid")`` runs the fused query (two prefetches, weighted RRF as a score
formula) and then each leg alone (ids and scores only) so every hit can say where it stood in each leg.
This compares, on SciFact-sized data (5,183 abstracts: real BM25 vectors, random unit dense vectors,
since latency does not depend on what the dense vectors mean), with the ACL + kind filter searches use:
- ``fused_only``: the fused engine query alone;
- ``legs_separate``: fused + both legs as three engine queries;
- ``legs_batched``: the same three requests through the engine's ``query_batch`` (what EdgeStore does).
Rounds alternate the variants so machine load hits them alike; the median of round medians is kept.

    .venv/bin/python bench/store_legs.py [--queries 300] [--rounds 3]

Prints and saves ``bench/results/store_legs.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent.eval.shared_data import shared_data_dir  # noqa: E402
from tools.knowledge_base.records import Chunk  # noqa: E402
from tools.knowledge_base.sparse import SparseEncoder  # noqa: E402
from tools.knowledge_base.store.edge import EdgeStore  # noqa: E402
from tools.knowledge_base.store.filters import restrict_to_groups  # noqa: E402

SCIFACT = shared_data_dir() / "scifact"
DIM = 384


class _Variant:
    """The shard as EdgeStore sees it, with its ``query_batch`` (fused query + legs) run as asked."""

    def __init__(self, shard: Any, how: str) -> None:
        self._shard = shard
        self._how = how

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)

    def query_batch(self, request: Any) -> list[Any]:
        fused, *legs = request.queries
        if self._how == "fused_only":
            return [self._shard.query(fused), *([] for _ in legs)]
        if self._how == "separate":
            return [self._shard.query(q) for q in request.queries]
        return self._shard.query_batch(request)


def build(store: EdgeStore, encoder: SparseEncoder, rng: np.random.Generator) -> int:
    with gzip.open(SCIFACT / "corpus.jsonl.gz", "rt", encoding="utf-8") as lines:
        docs = [json.loads(line) for line in lines]
    for start in range(0, len(docs), 1000):
        batch = docs[start : start + 1000]
        chunks = [
            Chunk(
                chunk_id=d["_id"],
                doc_id=f"part{start}",
                source="scifact",
                title=d.get("title", ""),
                text=d["text"],
            )
            for d in batch
        ]
        dense = rng.normal(size=(len(chunks), DIM)).astype(np.float32)
        dense /= np.linalg.norm(dense, axis=1, keepdims=True)
        version = uuid.uuid4().hex
        store.upsert(chunks, dense, [encoder.encode_document(c.index_text()) for c in chunks], version)
        store.commit_document(f"part{start}", version)
    return len(docs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "store_legs.json")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    encoder = SparseEncoder()
    store = EdgeStore(Path(tempfile.mkdtemp()) / "index", sparse_encoder=encoder.name)
    store.ensure_collection(DIM, "random-unit-vectors")
    points = build(store, encoder, rng)
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as lines:
        texts = [json.loads(line)["text"] for line in lines][: args.queries]
    dense = rng.normal(size=(len(texts), DIM)).astype(np.float32)
    sparse = [encoder.encode_query(t) for t in texts]
    where = restrict_to_groups({"kind": {"$in": ["chunk"]}}, ["public"])
    shard = store.shard

    def run(how: str) -> list[float]:
        latencies = []
        for i in range(len(texts)):
            variant = _Variant(shard, how)
            store._shard = variant
            started = time.perf_counter()
            store.query(
                mode="hybrid", dense=dense[i], sparse=sparse[i], filter=where,
                limit=10, leg_depth=50, rrf_k=60, weights=(1.0, 1.0),
            )  # fmt: skip
            latencies.append(time.perf_counter() - started)
            store._shard = shard
        return latencies

    medians: dict[str, list[float]] = {"fused_only": [], "legs_separate": [], "legs_batched": []}
    p95s: dict[str, list[float]] = {k: [] for k in medians}
    for _ in range(args.rounds):
        for name, how in (
            ("fused_only", "fused_only"),
            ("legs_separate", "separate"),
            ("legs_batched", "batched"),
        ):
            lat = run(how)
            medians[name].append(1000 * float(np.median(lat)))
            p95s[name].append(1000 * float(np.percentile(lat, 95)))
    store.close()
    result = {
        "points": points,
        "queries": len(texts),
        "rounds": args.rounds,
        "p50_ms": {k: round(float(np.median(v)), 3) for k, v in medians.items()},
        "p95_ms": {k: round(float(np.median(v)), 3) for k, v in p95s.items()},
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "command": " ".join(["bench/store_legs.py", *sys.argv[1:]]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
