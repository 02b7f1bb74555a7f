"""The embedder interface: texts in, L2-normalised float32 vectors out."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np


class Embedder(ABC):
    """Turns passages and queries into dense vectors of a fixed size."""

    #: identifies the model in caches and in the index; changing models must never mix vectors
    name: str
    dim: int
    #: what computes the vectors, for the trace and ``ragpilot doctor`` (not part of the vectors' identity)
    engine: str = ""
    #: longest input, in the model's own tokens
    max_tokens: int = 512

    @abstractmethod
    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array, one L2-normalised row per passage."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """Return a (dim,) float32 L2-normalised vector for one query."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return (
            np.stack([self.embed_query(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)
        )

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Tokens this model sees for ``text`` (used to size chunks)."""


class QueryVectorCache:
    """The last ``size`` query vectors: one question is embedded by the router, the search, the reranker
    and the refiner, and once is enough. Thread-safe; hands out copies (a caller may scale its vector)."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compute(self, text: str, compute: Callable[[str], np.ndarray]) -> np.ndarray:
        with self._lock:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
                return vector.copy()
        vector = compute(text)
        with self._lock:
            self._vectors[text] = vector
            if len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return vector.copy()
