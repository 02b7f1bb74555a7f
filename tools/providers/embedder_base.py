"""The embedder interface: texts in, L2-normalised float32 vectors out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np


class Embedder(ABC):
    """Turns passages and queries into dense vectors of a fixed size."""

    #: identifies the model in caches and in the index; changing models must never mix vectors
    name: str
    dim: int
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
