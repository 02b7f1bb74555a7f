"""The offline reranker's measurement ground: datasets, e5/BM25 signals, the fused candidate lists the
reranker sees in production, and ranx runs over them. ``bench.rerank`` (the measurement) and
``bench.train_offline_reranker`` (the fit) both build on it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from agent.eval.shared_data import shared_data_dir  # noqa: E402
from core.settings import RerankSettings  # noqa: E402
from tools.knowledge_base.records import Hit, LegScore  # noqa: E402
from tools.knowledge_base.sparse import SparseEncoder  # noqa: E402
from tools.rerank.offline import PassageTerms, candidate_features, judged_passage  # noqa: E402

DATA = shared_data_dir()
BENCH_HOME = REPO / ".ragpilot-bench"
METRICS = ["ndcg@10", "recall@10", "recall@100", "mrr@10", "precision@5"]

# The default search configuration (settings.search / settings.rerank defaults).
LEG_DEPTH = 50
RRF_K = 60
CANDIDATES = 30
MAX_TOKENS = RerankSettings().max_tokens


# ---------------------------------------------------------------------------------------------- data
@dataclass
class Dataset:
    name: str
    docs: list[dict]  # {"_id", "title", "text"}
    queries: dict[str, str]
    qrels: dict[str, dict[str, dict[str, int]]]  # split -> query -> doc -> grade

    def index_texts(self) -> list[str]:
        return ["\n".join(p for p in (d["title"], d["text"]) if p) for d in self.docs]


def load_beir(folder: Path) -> Dataset:
    with gzip.open(folder / "corpus.jsonl.gz", "rt", encoding="utf-8") as corpus:
        docs = [json.loads(line) for line in corpus]
    with open(folder / "queries.jsonl", encoding="utf-8") as lines:
        queries = {q["_id"]: q["text"] for q in map(json.loads, lines)}
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    for split_file in sorted((folder / "qrels").glob("*.tsv")):
        split = qrels.setdefault(split_file.stem, {})
        for i, line in enumerate(split_file.read_text().splitlines()):
            if i == 0 or not line.strip():
                continue
            qid, did, grade = line.split("\t")
            split.setdefault(qid, {})[did] = int(grade)
    wanted = {q for split in qrels.values() for q in split}
    return Dataset(
        folder.name, [_doc(d) for d in docs], {q: t for q, t in queries.items() if q in wanted}, qrels
    )


def _doc(d: dict) -> dict:
    return {"_id": str(d["_id"]), "title": d.get("title", "") or "", "text": d["text"]}


def load_squad_like(name: str, articles: list[dict], n_questions: int = 300) -> Dataset:
    """Passages from SQuAD-format articles; every k-th question (k chosen to keep ~n_questions) is a
    query whose only relevant passage is its own paragraph."""
    docs, questions = [], []
    for article in articles:
        for paragraph in article["paragraphs"]:
            did = f"{name}-{len(docs)}"
            docs.append(
                {
                    "_id": did,
                    "title": article["title"].replace("_", " "),
                    "text": paragraph["context"].strip(),
                }
            )
            questions.extend((qa["id"], qa["question"].strip(), did) for qa in paragraph["qas"])
    step = max(1, len(questions) // n_questions)
    picked = questions[::step][:n_questions]
    return Dataset(name, docs, {q: t for q, t, _ in picked}, {"test": {q: {d: 1} for q, _, d in picked}})


def load_squad() -> Dataset:
    with gzip.open(DATA / "squad" / "dev-v1.1.json.gz", "rt", encoding="utf-8") as f:
        articles = json.load(f)["data"][:6]
    return load_squad_like("squad", articles)


def load_cmrc() -> Dataset:
    with open(DATA / "cmrc2018" / "cmrc2018_trial.json", encoding="utf-8") as f:
        articles = json.load(f)["data"]
    return load_squad_like("cmrc", articles)


# ------------------------------------------------------------------------------------------- signals
@dataclass
class Signals:
    """Everything the first stage needs, per dataset: e5 vectors and the BM25 score matrix."""

    query_ids: list[str]
    query_vectors: np.ndarray  # (q, 384)
    passage_vectors: np.ndarray  # (d, 384)
    bm25: np.ndarray  # (q, d)
    dense: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.dense = self.query_vectors @ self.passage_vectors.T


def e5_signals(ds: Dataset) -> Signals:
    """e5 vectors from the bench cache (missing passages are embedded and cached; slow) and BM25."""
    from core.settings import load_settings
    from tools.knowledge_base.embed_cache import EmbeddingCache
    from tools.providers.embedder_factory import get_local_e5_embedder

    threads = int(os.environ.get("BENCH_THREADS", "1"))
    embedder = get_local_e5_embedder(load_settings(embedder={"num_threads": threads}))
    cache = EmbeddingCache(BENCH_HOME / "embeddings.sqlite", embedder.name, embedder.dim)
    texts = ds.index_texts()
    passages, embedded = cache.embed(texts, embedder.embed_passages, batch_size=16)
    if embedded:
        print(f"  {ds.name}: embedded {embedded} passages missing from the cache", flush=True)
    query_ids = list(ds.queries)
    query_vectors = _query_vectors(ds, query_ids, embedder)
    cache.close()
    return Signals(
        query_ids,
        query_vectors,
        passages.astype(np.float64),
        bm25_matrix(texts, [ds.queries[q] for q in query_ids]),
    )


def _query_vectors(ds: Dataset, query_ids: list[str], embedder) -> np.ndarray:
    """e5 query vectors, cached by query text in ``.ragpilot-bench/rerank/query-vectors.npz``."""
    path = BENCH_HOME / "rerank" / "query-vectors.npz"
    known: dict[str, np.ndarray] = {}
    if path.exists():
        with np.load(path) as stored:
            known = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))
    keys = [hashlib.sha256(ds.queries[q].encode()).hexdigest() for q in query_ids]
    missing = [(k, q) for k, q in zip(keys, query_ids, strict=True) if k not in known]
    for key, q in missing:
        known[key] = embedder.embed_query(ds.queries[q])
    if missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, keys=np.array(list(known)), vectors=np.stack(list(known.values())))
    return np.stack([known[k] for k in keys]).astype(np.float64)


def bm25_matrix(passages: Sequence[str], queries: Sequence[str]) -> np.ndarray:
    """BM25 exactly as the index computes it: SparseEncoder's document weights times Qdrant's IDF,
    ln(1 + (N - n + 0.5) / (n + 0.5)), summed over the query's unique terms."""
    encoder = SparseEncoder()
    vocab: dict[int, int] = {}
    rows, cols, vals = [], [], []
    for r, text in enumerate(passages):
        vec = encoder.encode_document(text)
        for term, weight in zip(vec.indices, vec.values, strict=True):
            rows.append(r)
            cols.append(vocab.setdefault(term, len(vocab)))
            vals.append(weight)
    weights = sp.csc_matrix((vals, (rows, cols)), shape=(len(passages), len(vocab)))
    doc_freq = np.bincount(cols, minlength=len(vocab))
    idf = np.log1p((len(passages) - doc_freq + 0.5) / (doc_freq + 0.5))
    out = np.zeros((len(queries), len(passages)))
    for i, query in enumerate(queries):
        terms = [vocab[t] for t in encoder.encode_query(query).indices if t in vocab]
        if terms:
            out[i] = weights[:, terms] @ idf[terms]
    return out


# -------------------------------------------------------------------------------------- first stage
def _top(scores: np.ndarray, k: int) -> np.ndarray:
    k = min(k, len(scores))
    idx = np.argpartition(-scores, k - 1)[:k]
    return idx[np.argsort(-scores[idx], kind="stable")]


def fused_list(
    dense: np.ndarray | None,
    bm25: np.ndarray | None,
    leg_depth: int = LEG_DEPTH,
    rrf_k: int = RRF_K,
    limit: int = 100,
) -> list[tuple[int, float, dict[str, LegScore]]]:
    """(passage index, fused score, legs) best first: weighted RRF of each leg's top ``leg_depth``, as
    the store computes it (a BM25 score of 0 means no term matched: not in that leg)."""
    legs: dict[int, dict[str, LegScore]] = {}
    if dense is not None:
        for rank, j in enumerate(_top(dense, leg_depth), start=1):
            legs.setdefault(int(j), {})["dense"] = LegScore(rank=rank, score=float(dense[j]))
    if bm25 is not None:
        for rank, j in enumerate(_top(bm25, leg_depth), start=1):
            if bm25[j] > 0:
                legs.setdefault(int(j), {})["sparse"] = LegScore(rank=rank, score=float(bm25[j]))
    fused = {j: sum(1.0 / (rrf_k + leg.rank) for leg in ls.values()) for j, ls in legs.items()}
    order = sorted(fused, key=lambda j: (-fused[j], j))[:limit]
    return [(j, fused[j], legs[j]) for j in order]


def single_leg_list(
    scores: np.ndarray, name: str, limit: int = 100
) -> list[tuple[int, float, dict[str, LegScore]]]:
    return [
        (int(j), float(scores[j]), {name: LegScore(rank=r, score=float(scores[j]))})
        for r, j in enumerate(_top(scores, limit), start=1)
    ]


def to_hits(ds: Dataset, fused: list[tuple[int, float, dict[str, LegScore]]]) -> list[Hit]:
    return [
        Hit(
            chunk_id=ds.docs[j]["_id"],
            doc_id=ds.docs[j]["_id"],
            text=ds.docs[j]["text"],
            title=ds.docs[j]["title"],
            score=score,
            legs=legs,
        )
        for j, score, legs in fused
    ]


# ------------------------------------------------------------------------------------- candidates
@dataclass
class Candidates:
    """One query's fused list (100) and the features of its first ``CANDIDATES`` entries."""

    query_id: str
    fused: list[tuple[int, float, dict[str, LegScore]]]
    features: np.ndarray
    labels: np.ndarray


class CandidateBuilder:
    """Builds candidate features with the reranker's own ``candidate_features`` (no train/serve skew)."""

    def __init__(self, ds: Dataset, signals: Signals) -> None:
        self.ds, self.signals = ds, signals
        self.row = {q: i for i, q in enumerate(signals.query_ids)}
        self.index_texts = ds.index_texts()
        self._terms: dict[tuple[str, str], PassageTerms] = {}

    def judged(self, query: str, j: int) -> tuple[str, str]:
        """What the reranker reads of passage ``j`` for ``query`` (the same token budget as at run time)."""
        return judged_passage(query, self.ds.docs[j]["title"], self.index_texts[j], MAX_TOKENS)

    def terms(self, judged: tuple[str, str]) -> PassageTerms:
        if judged not in self._terms:
            self._terms[judged] = PassageTerms(*judged)
        return self._terms[judged]

    def build(
        self,
        query_ids: Sequence[str],
        qrels: dict[str, dict[str, int]],
        rrf_k: int = RRF_K,
        prf_passages: int = 3,
        prf_weight: float = 1.0,
        feedback_scores: dict[str, np.ndarray] | None = None,
    ) -> list[Candidates]:
        """Candidates of each query; with ``feedback_scores`` (a first-pass model's scores per query) the
        pseudo-relevance feedback reads that model's top passages instead of the fusion's top."""
        out = []
        for q in query_ids:
            i = self.row[q]
            fused = fused_list(self.signals.dense[i], self.signals.bm25[i], rrf_k=rrf_k)
            head = fused[:CANDIDATES]
            idx = [j for j, _, _ in head]
            judged = [self.judged(self.ds.queries[q], j) for j in idx]
            features = candidate_features(
                self.ds.queries[q],
                to_hits(self.ds, head),
                judged,
                [self.terms(p) for p in judged],
                self.signals.query_vectors[i],
                self.signals.passage_vectors[idx],
                prf_passages=prf_passages,
                prf_weight=prf_weight,
                feedback_rows=None
                if feedback_scores is None
                else np.argsort(-feedback_scores[q], kind="stable")[:prf_passages].tolist(),
            )
            labels = np.array([qrels.get(q, {}).get(self.ds.docs[j]["_id"], 0) for j in idx])
            out.append(Candidates(q, fused, features, labels))
        return out


# ------------------------------------------------------------------------------------------ metrics
def run_from_order(
    ds: Dataset, fused: list[tuple[int, float, dict]], order: Sequence[int]
) -> dict[str, float]:
    """A ranx run row: ``order`` (indices into ``fused``) first, the rest of ``fused`` after it."""
    rest = [o for o in range(len(fused)) if o not in set(order)]
    full = list(order) + rest
    return {ds.docs[fused[o][0]]["_id"]: float(len(full) - r) for r, o in enumerate(full)}


def rescored_run(ds: Dataset, cands: Sequence[Candidates], scorer) -> dict[str, dict[str, float]]:
    return {
        c.query_id: run_from_order(ds, c.fused, list(np.argsort(-scorer(c.features), kind="stable")))
        for c in cands
    }


def fused_run(ds: Dataset, cands: Sequence[Candidates]) -> dict[str, dict[str, float]]:
    return {c.query_id: run_from_order(ds, c.fused, range(len(c.fused))) for c in cands}


def evaluate_run(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], metrics=METRICS
) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    scores = evaluate(Qrels({q: qrels[q] for q in run}), Run(run), list(metrics))
    if not isinstance(scores, dict):
        scores = {metrics[0]: scores}
    return {k: round(float(v), 4) for k, v in scores.items()}


def ndcg10(qrels, run) -> float:
    return evaluate_run(qrels, run, ["ndcg@10"])["ndcg@10"]


def compare_runs(
    qrels: dict[str, dict[str, int]], runs: dict[str, dict[str, dict[str, float]]], baseline: str
) -> dict:
    """ranx's paired Student's t-test of every run against ``baseline`` on nDCG@10 (per-query pairs)."""
    from ranx import Qrels, Run, compare

    names = list(runs)
    ranx_runs = []
    for name in names:
        run = Run(runs[name])
        run.name = name
        ranx_runs.append(run)
    report = compare(
        Qrels({q: qrels[q] for q in runs[baseline]}), ranx_runs, ["ndcg@10"], stat_test="student", max_p=0.05
    )
    out = {}
    for name in names:
        if name == baseline:
            continue
        out[name] = {
            "ndcg@10": round(float(report.results[name]["ndcg@10"]), 4),
            "baseline_ndcg@10": round(float(report.results[baseline]["ndcg@10"]), 4),
            "p_value_vs_baseline": float(report.comparisons[(name, baseline)]["ndcg@10"]["p_value"]),
        }
    return out


FEATURE_GROUPS: dict[str, list[str]] = {
    "fusion": [
        "fused_position_log",
        "fused_score_rel",
        "dense_rank_log",
        "sparse_rank_log",
        "sparse_score_rel",
        "rrf10",
    ],
    "dense": ["query_cosine", "query_cosine_gap"],
    "dense_prf": ["prf_cosine", "expanded_query_cosine", "expanded_query_cosine_gap", "neighbour_cosine"],
    "lexical": [
        "term_coverage",
        "term_coverage_gap",
        "prf_term_overlap",
        "title_coverage",
        "best_sentence_coverage",
        "bigram_share",
        "number_share",
        "query_has_numbers",
        "passage_length_log",
        "query_length_log",
    ],
}
