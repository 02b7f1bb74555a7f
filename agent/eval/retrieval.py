"""Retrieval evaluation on a BEIR dataset: nDCG@10, Recall@10/100, MRR@10, P@5 (with ``ranx``) and latency.

The corpus is ingested through the normal pipeline (``ingest``) into a collection named after the
dataset, with chunks large enough (4,096 tokens) that every BEIR document is one chunk: 731 of SciFact's
5,183 abstracts exceed 512 e5 tokens (the longest has 2,258), and BEIR scores whole documents. The
embedder itself windows and averages texts over its 512-token input, as it did when the shared
embedding cache (``<home>/embeddings.sqlite``) was filled with "{title}\n{text}" of every abstract. Chunk hits are aggregated
to documents by the best position of any of their chunks (equivalently, the max of a rank-derived
score, which keeps a reranked head and a fusion-ordered tail in one consistent order).

Latency is measured per query, both with the query embedding and without it (the store query,
fusion and rerank only), and reported as p50/p95 in milliseconds.
"""

from __future__ import annotations

import gzip
import json
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from core.errors import ConfigError
from core.settings import Settings, load_settings
from tools.knowledge_base.records import Hit
from tools.search import SearchRequest, encode_queries, search_encoded

METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "precision@5")


def default_bench_home() -> Path:
    """Evaluation indexes live in the data directory (``<home>/bench``), not in the working directory."""
    return load_settings().home / "bench"


EVAL_CHUNK_TOKENS = 4096  # one chunk per BEIR document (see the module docstring)
RerankChoice = Literal["none", "auto", "offline", "cohere", "cross_encoder"]


class BeirSplit(BaseModel):
    """A BEIR dataset's corpus file and one split's queries and relevance judgements."""

    name: str
    corpus_path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


class LatencyStats(BaseModel):
    p50_ms: float
    p95_ms: float
    mean_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> LatencyStats:
        ms = np.asarray(seconds, dtype=np.float64) * 1000.0
        if ms.size == 0:
            return cls(p50_ms=0.0, p95_ms=0.0, mean_ms=0.0)
        return cls(
            p50_ms=round(float(np.percentile(ms, 50)), 3),
            p95_ms=round(float(np.percentile(ms, 95)), 3),
            mean_ms=round(float(ms.mean()), 3),
        )


class RetrievalEvalConfig(BaseModel):
    beir_dir: Path
    split: str = "test"
    mode: Literal["dense", "sparse", "hybrid"] | None = None
    rerank: RerankChoice = "none"
    top_k: int = Field(100, ge=1, le=1000)
    limit_queries: int | None = Field(default=None, ge=1)
    rrf_k: int | None = Field(default=None, ge=1)
    dense_weight: float | None = Field(default=None, ge=0)
    sparse_weight: float | None = Field(default=None, ge=0)
    leg_depth: int | None = Field(default=None, ge=1, description="default: max(search.leg_depth, top_k)")


class RetrievalReport(BaseModel):
    dataset: str
    split: str
    queries: int
    mode: str
    rerank: str
    top_k: int
    rrf_k: int
    dense_weight: float
    sparse_weight: float
    leg_depth: int
    metrics: dict[str, float]
    latency_with_embedding: LatencyStats
    latency_without_embedding: LatencyStats
    latency_embedding: LatencyStats
    latency_rerank: LatencyStats | None = None
    index_documents: int
    index_points: int
    ingest: dict[str, Any] | None = Field(
        default=None, description="the ingest report, when this run had to ingest"
    )


def load_beir(beir_dir: Path, split: str) -> BeirSplit:
    """Read a BEIR folder (``corpus.jsonl[.gz]``, ``queries.jsonl``, ``qrels/<split>.tsv``); queries are
    those judged in the split. Missing or malformed files raise ConfigError naming the file."""
    beir_dir = Path(beir_dir)
    corpus = next((p for p in (beir_dir / "corpus.jsonl.gz", beir_dir / "corpus.jsonl") if p.is_file()), None)
    if corpus is None:
        raise ConfigError(
            f"{beir_dir}: no corpus.jsonl or corpus.jsonl.gz (is --beir a BEIR dataset folder?)"
        )
    qrels_path = beir_dir / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        raise ConfigError(f"{qrels_path}: no qrels for split {split!r}")
    qrels: dict[str, dict[str, int]] = {}
    for line_no, line in enumerate(qrels_path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split("\t")
        if line_no == 1 and parts[0] == "query-id":
            continue
        if not line.strip():
            continue
        if len(parts) != 3:
            raise ConfigError(f"{qrels_path}:{line_no}: expected 'query-id<TAB>corpus-id<TAB>score'")
        try:
            score = int(parts[2])
        except ValueError:
            raise ConfigError(f"{qrels_path}:{line_no}: score {parts[2]!r} is not an integer") from None
        qrels.setdefault(parts[0], {})[parts[1]] = score
    queries_path = beir_dir / "queries.jsonl"
    if not queries_path.is_file():
        raise ConfigError(f"{queries_path}: missing")
    queries: dict[str, str] = {}
    for line_no, line in enumerate(queries_path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            query_id, text = str(record["_id"]), str(record["text"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise ConfigError(
                f"{queries_path}:{line_no}: not a BEIR query record with _id and text"
            ) from None
        if query_id in qrels:
            queries[query_id] = text
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise ConfigError(f"{queries_path}: {len(missing)} judged queries have no text (e.g. {missing[0]!r})")
    return BeirSplit(name=beir_dir.name, corpus_path=corpus, queries=queries, qrels=qrels)


def corpus_size(corpus_path: Path) -> int:
    opener = gzip.open if corpus_path.suffix == ".gz" else open
    with opener(corpus_path, "rt", encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


def eval_settings(beir: BeirSplit, home: Path | None = None, **overrides: Any) -> Settings:
    """Settings of an evaluation index: a collection per dataset, one chunk per document (so the shared
    embedding cache of ``home`` serves it)."""
    collection = "beir_" + "".join(c if c.isalnum() or c in "_-" else "_" for c in beir.name)[:50]
    return load_settings(
        home=home or default_bench_home(),
        chunking={"chunk_tokens": EVAL_CHUNK_TOKENS},
        qdrant={"collection": collection},
        **overrides,
    )


def ensure_indexed(
    beir: BeirSplit, settings: Settings, kb: Any, progress: bool = True
) -> dict[str, Any] | None:
    """Ingest the corpus unless every document is already indexed; returns the ingest report if it ran."""
    from tools.knowledge_base.ingest import ingest

    if len(kb.store.documents()) >= corpus_size(beir.corpus_path):
        return None
    report = ingest([beir.corpus_path], settings, progress=progress, kb=kb)
    return report.model_dump(mode="json")


def rank_documents(hits: Sequence[Hit]) -> dict[str, float]:
    """Chunk hits (final order) → documents scored by their best position: ``n - position``."""
    scores: dict[str, float] = {}
    for position, hit in enumerate(hits):
        scores.setdefault(hit.doc_id, float(len(hits) - position))
    return scores


def run_retrieval_eval(
    config: RetrievalEvalConfig,
    settings: Settings,
    *,
    progress: bool = True,
    on_query: Callable[[int, int], None] | None = None,
) -> tuple[RetrievalReport, Any]:
    """Run a BEIR split through ``hybrid_search`` (and a reranker) and score it; returns the report and
    the ranx ``Run`` (one ranked document list per query), so runs can be saved and compared."""
    from tools.knowledge_base.knowledge_base import KnowledgeBase

    beir = load_beir(config.beir_dir, config.split)
    query_ids = list(beir.queries)[: config.limit_queries] if config.limit_queries else list(beir.queries)
    leg_depth = config.leg_depth or max(settings.search.leg_depth, config.top_k)
    request_template = SearchRequest(
        queries=["-"],
        mode=config.mode,
        top_k=config.top_k,
        rrf_k=config.rrf_k,
        dense_weight=config.dense_weight,
        sparse_weight=config.sparse_weight,
        leg_depth=leg_depth,
    )
    reranker = None
    if config.rerank != "none":
        from tools.rerank.factory import get_reranker

        reranker = get_reranker(
            settings.model_copy(
                update={"rerank": settings.rerank.model_copy(update={"provider": config.rerank})}
            )
        )

    with KnowledgeBase.open(settings) as kb:
        ingest_report = ensure_indexed(beir, settings, kb, progress=progress)
        run_dict: dict[str, dict[str, float]] = {}
        with_embedding, without_embedding, embedding, rerank_times = [], [], [], []
        for n, query_id in enumerate(query_ids, start=1):
            search = request_template.model_copy(update={"queries": [beir.queries[query_id]]}).resolved(
                settings.search
            )
            started = time.perf_counter()
            encoded = encode_queries(search, kb)
            encoded_at = time.perf_counter()
            hits = search_encoded(search, kb, settings.user_groups, encoded)
            if reranker is not None and hits:
                rerank_started = time.perf_counter()
                head = reranker.rerank(
                    search.queries[0], hits[: settings.rerank.candidates], settings.rerank.candidates
                )
                rerank_times.append(time.perf_counter() - rerank_started)
                head_ids = {h.chunk_id for h in head}
                hits = head + [h for h in hits if h.chunk_id not in head_ids]
            finished = time.perf_counter()
            with_embedding.append(finished - started)
            without_embedding.append(finished - encoded_at)
            embedding.append(encoded_at - started)
            run_dict[query_id] = rank_documents(hits)
            if on_query:
                on_query(n, len(query_ids))
        index_documents, index_points = len(kb.store.documents()), kb.store.count()

    run, scores = score_run(beir, run_dict)
    resolved = request_template.resolved(settings.search)
    report = RetrievalReport(
        dataset=beir.name,
        split=config.split,
        queries=len(query_ids),
        mode=resolved.mode,
        rerank=config.rerank if reranker is None else f"{config.rerank} ({reranker.name})",
        top_k=config.top_k,
        rrf_k=resolved.rrf_k,
        dense_weight=resolved.weights[0],
        sparse_weight=resolved.weights[1],
        leg_depth=leg_depth,
        metrics={m: round(float(scores[m]), 4) for m in METRICS},
        latency_with_embedding=LatencyStats.of(with_embedding),
        latency_without_embedding=LatencyStats.of(without_embedding),
        latency_embedding=LatencyStats.of(embedding),
        latency_rerank=LatencyStats.of(rerank_times) if reranker is not None else None,
        index_documents=index_documents,
        index_points=index_points,
        ingest=ingest_report,
    )
    run.name = describe_run(report)
    return report, run


def score_run(beir: BeirSplit, run_dict: dict[str, dict[str, float]]) -> tuple[Any, dict[str, float]]:
    """The ranx Run of per-query document scores, and its METRICS against the split's qrels."""
    from ranx import Qrels, Run, evaluate

    qrels = Qrels({qid: beir.qrels[qid] for qid in run_dict})
    # A query with no hit still counts (as zeros): ranx needs a non-empty ranking per query.
    run = Run({qid: docs or {"__no_hit__": 0.0} for qid, docs in run_dict.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety chatter
        scores = evaluate(qrels, run, list(METRICS))
    return run, {m: float(scores[m]) for m in METRICS}


class FusionPoint(BaseModel):
    rrf_k: int
    dense_weight: float
    sparse_weight: float
    metrics: dict[str, float]


def sweep_fusion(
    beir_dir: Path,
    split: str,
    settings: Settings,
    rrf_ks: Sequence[int],
    weight_pairs: Sequence[tuple[float, float]],
    *,
    top_k: int = 100,
    leg_depth: int | None = None,
    limit_queries: int | None = None,
) -> list[FusionPoint]:
    """Hybrid search metrics for every (rrf_k, dense/sparse weights) pair, best nDCG@10 first. Each query
    is embedded once and only the store query is repeated, so a grid costs little more than one run.
    Tune on a train split; report the chosen point on test."""
    from tools.knowledge_base.knowledge_base import KnowledgeBase

    beir = load_beir(beir_dir, split)
    query_ids = list(beir.queries)[:limit_queries] if limit_queries else list(beir.queries)
    depth = leg_depth or max(settings.search.leg_depth, top_k)
    base = SearchRequest(queries=[beir.queries[q] for q in query_ids][:1], mode="hybrid", top_k=top_k,
                         leg_depth=depth)  # fmt: skip
    points = []
    with KnowledgeBase.open(settings) as kb:
        ensure_indexed(beir, settings, kb, progress=False)
        encoded = {}
        for qid in query_ids:
            search = base.model_copy(update={"queries": [beir.queries[qid]]}).resolved(settings.search)
            encoded[qid] = (search, encode_queries(search, kb))
        for rrf_k in rrf_ks:
            for dense_weight, sparse_weight in weight_pairs:
                run_dict = {}
                for qid, (search, vectors) in encoded.items():
                    knobs = replace(search, rrf_k=rrf_k, weights=(dense_weight, sparse_weight))
                    run_dict[qid] = rank_documents(search_encoded(knobs, kb, settings.user_groups, vectors))
                _run, scores = score_run(beir, run_dict)
                points.append(FusionPoint(rrf_k=rrf_k, dense_weight=dense_weight, sparse_weight=sparse_weight,
                                          metrics={m: round(v, 4) for m, v in scores.items()}))  # fmt: skip
    return sorted(points, key=lambda p: -p.metrics["ndcg@10"])


def describe_run(report: RetrievalReport) -> str:
    """A run name without spaces (TREC run files are whitespace-separated)."""
    name = f"{report.mode}"
    if report.mode == "hybrid":
        name += f"-k{report.rrf_k}-w{report.dense_weight:g}:{report.sparse_weight:g}"
    if report.rerank != "none":
        name += f"+{report.rerank.split()[0]}"
    return name


def _run_kind(path: Path) -> str:
    return "trec" if path.suffix in (".trec", ".txt") else "json"


def save_run(run: Any, path: Path) -> Path:
    """Save a run as TREC (``.trec``/``.txt``) or ranx JSON (anything else), for later comparisons."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    run.name = "_".join(str(run.name or path.stem).split())
    run.save(str(path), kind=_run_kind(path))
    return path


def load_run(path: Path, name: str | None = None) -> Any:
    """A run saved by ``save_run``; a missing or unreadable file is a ConfigError naming it."""
    from ranx import Run

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such run file")
    try:
        return Run.from_file(str(path), kind=_run_kind(path), name=name or path.stem)
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a {_run_kind(path).upper()} run file ({exc})") from None


def compare_runs(
    beir_dir: Path,
    split: str,
    runs: Mapping[str, Any],
    *,
    metrics: Sequence[str] = METRICS,
    stat_test: Literal["student", "fisher", "tukey"] = "student",
    max_p: float = 0.05,
) -> Any:
    """Paired significance test between runs (ranx ``compare``: paired t-test ``student`` or Fisher's
    randomisation ``fisher``) on the split's qrels. ``runs`` maps a name to a ranx Run or a run file.
    Returns the ranx ``Report`` (print it, or ``.to_dict()``)."""
    from ranx import Qrels, compare

    beir = load_beir(beir_dir, split)
    loaded = []
    for name, run in runs.items():
        run = load_run(Path(run), name) if isinstance(run, str | Path) else run
        run.name = name
        loaded.append(run)
    judged = set().union(*(set(r.keys()) for r in loaded)) if loaded else set()
    qrels = Qrels({qid: docs for qid, docs in beir.qrels.items() if qid in judged})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare(qrels, loaded, list(metrics), stat_test=stat_test, max_p=max_p, make_comparable=True)
