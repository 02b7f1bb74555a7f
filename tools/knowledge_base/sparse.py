"""BM25 as a sparse vector, shared by both store backends so they hold identical vectors.

Qdrant's sparse vectors with ``Modifier.IDF`` make the engine multiply each query term by its IDF over the
collection at query time, so the corpus-wide half of BM25 lives in the engine (it scales with the
server). Each document carries only the term-frequency half:

    w(t, d) = tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))      k1 = 1.2, b = 0.75

and a query carries 1.0 per unique term, so the engine's dot product is exactly Σ idf(t) · w(t, d).

``avgdl`` is a fixed constant (256 tokens, like Qdrant's own BM25 model), not the live corpus average:
a document's weights are computed once at ingest, and a corpus-dependent average would drift as
documents come and go, silently making old and new vectors inconsistent unless everything were
re-encoded. A constant only shifts how strongly length is normalised, uniformly for every document.

Tokenization is Unicode-aware and per script run: Han text goes through jieba's search-mode
segmentation (words plus their sub-words, good for recall); everything else is split into word
characters, lowercased, English stop words removed and Snowball-stemmed with PyStemmer.

Traditional Chinese is folded onto Simplified before segmentation (``tools.chinese_script``): a
Traditional question then matches a Simplified document's terms and the reverse, and jieba, whose
dictionary is Simplified, segments Traditional text as well as Simplified. An index built before
folding (``bm25-jieba-snowball-v1``) keeps its own tokenizer until it is built again.
"""

from __future__ import annotations

import logging
import re
import threading
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import Stemmer

from tools.chinese_script import fold_to_simplified


@dataclass(frozen=True)
class SparseVec:
    """A sparse vector as Qdrant takes it: term ids and their weights."""

    indices: list[int]
    values: list[float]


DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
DEFAULT_AVGDL = 256.0

# Han ideographs (CJK unified, extension A, compatibility) form runs segmented by jieba.
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# Word characters of any other script; \w is Unicode-aware in Python 3.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")

# Lucene/NLTK-style English stop words (the usual BM25 baseline list).
ENGLISH_STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its
    itself let's me more most mustn't my myself no nor not of off on once only or other ought our ours
    ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll they're they've
    this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what
    what's when when's where where's which while who who's whom why why's will with won't would wouldn't
    you you'd you'll you're you've your yours yourself yourselves s t just also
    """.split()  # noqa: SIM905 - a word list reads better as text
)

# A few Chinese function words that carry no topic (jieba keeps them as tokens).
CHINESE_STOP_WORDS = frozenset(
    [
        "的",
        "了",
        "和",
        "是",
        "在",
        "就",
        "都",
        "而",
        "及",
        "与",
        "着",
        "或",
        "之",
        "其",
        "于",
        "把",
        "被",
        "也",
        "吗",
        "呢",
        "吧",
        "啊",
        "这",
        "那",
        "个",
    ]
)

_jieba_lock = threading.Lock()
_jieba_ready = False


def _jieba():
    """jieba, initialised once per process and quietly (it logs its dictionary loading by default)."""
    global _jieba_ready
    import jieba

    if not _jieba_ready:
        with _jieba_lock:
            if not _jieba_ready:
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_ready = True
    return jieba


_stemmer_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    # PyStemmer objects are not thread-safe: one per thread.
    stemmer = getattr(_stemmer_local, "stemmer", None)
    if stemmer is None:
        stemmer = _stemmer_local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def _latin_tokens(text: str) -> list[str]:
    words = [w.replace("’", "'") for w in _WORD.findall(text)]
    kept = [w for w in words if w not in ENGLISH_STOP_WORDS]
    # Strip a possessive/contraction tail after the stop-word check ("cell's" -> "cell").
    kept = [w.split("'", 1)[0] for w in kept]
    return _stemmer().stemWords([w for w in kept if w])


def tokenize(text: str, *, fold_chinese_script: bool = True) -> list[str]:
    """BM25 terms of ``text`` in order: lowercased; Han runs (Traditional folded onto Simplified) segmented
    by jieba (search mode), other runs split into words with English stop words removed and
    Snowball-stemmed."""
    text = text.lower()
    if fold_chinese_script:
        text = fold_to_simplified(text)
    tokens: list[str] = []
    position = 0
    for match in _HAN_RUN.finditer(text):
        if match.start() > position:
            tokens.extend(_latin_tokens(text[position : match.start()]))
        tokens.extend(w for w in _jieba().lcut_for_search(match.group()) if w not in CHINESE_STOP_WORDS)
        position = match.end()
    if position < len(text):
        tokens.extend(_latin_tokens(text[position:]))
    return tokens


def term_id(term: str) -> int:
    """A stable 31-bit id for a term (crc32; Python's ``hash()`` is salted per process)."""
    return zlib.crc32(term.encode("utf-8")) & 0x7FFFFFFF


#: names recorded in the index metadata: changing tokenization or weighting means re-encoding the corpus
FOLDING_ENCODER = "bm25-jieba-snowball-zhfold-v2"
UNFOLDED_ENCODER = "bm25-jieba-snowball-v1"


class SparseEncoder:
    """Encodes documents and queries as BM25 sparse vectors for a collection with ``Modifier.IDF``."""

    def __init__(
        self,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        avgdl: float = DEFAULT_AVGDL,
        *,
        fold_chinese_script: bool = True,
    ) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0 or avgdl <= 0:
            raise ValueError(f"invalid BM25 parameters: k1={k1}, b={b}, avgdl={avgdl}")
        self.k1 = k1
        self.b = b
        self.avgdl = avgdl
        self.fold_chinese_script = fold_chinese_script
        self.name = FOLDING_ENCODER if fold_chinese_script else UNFOLDED_ENCODER

    @classmethod
    def for_index(cls, built_with: str | None, *, fold_chinese_script: bool = True) -> SparseEncoder:
        """The encoder an index was built with (an index built before folding keeps its tokenizer until
        it is built again); a new index, or one of an unknown encoder, gets ``fold_chinese_script``'s."""
        if built_with in (FOLDING_ENCODER, UNFOLDED_ENCODER):
            return cls(fold_chinese_script=built_with == FOLDING_ENCODER)
        return cls(fold_chinese_script=fold_chinese_script)

    def encode_document(self, text: str) -> SparseVec:
        """Term-frequency-saturated, length-normalised weights of the terms of ``text`` (empty for no terms)."""
        tokens = tokenize(text, fold_chinese_script=self.fold_chinese_script)
        tf = Counter(term_id(t) for t in tokens)
        length_norm = self.k1 * (1.0 - self.b + self.b * len(tokens) / self.avgdl)
        indices = sorted(tf)
        values = [tf[i] * (self.k1 + 1.0) / (tf[i] + length_norm) for i in indices]
        return SparseVec(indices=indices, values=values)

    def encode_documents(self, texts: Iterable[str]) -> list[SparseVec]:
        return [self.encode_document(t) for t in texts]

    def encode_query(self, text: str) -> SparseVec:
        """1.0 per unique term: the engine supplies the IDF, so the score is the BM25 sum."""
        indices = sorted({term_id(t) for t in tokenize(text, fold_chinese_script=self.fold_chinese_script)})
        return SparseVec(indices=indices, values=[1.0] * len(indices))
