"""A persistent cache of passage embeddings, keyed by (embedder name, sha256 of the indexed text).

Embedding is the slow step of ingestion (multilingual-e5 on 2 cores: a few passages a second), so a
passage is embedded once per model, ever: re-ingesting, re-chunking with overlapping results or
rebuilding an index after a crash reuses every vector already paid for.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, path: Path, model_name: str, dim: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings ("
            " model TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL,"
            " PRIMARY KEY (model, text_hash)) WITHOUT ROWID"
        )
        self._lock = threading.Lock()
        self.model_name = model_name
        self.dim = dim

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                batch = list(keys[start : start + 500])
                marks = ",".join("?" * len(batch))
                rows = self._db.execute(
                    f"SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN ({marks})",
                    [self.model_name, *batch],
                ).fetchall()
                for key, blob in rows:
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape == (self.dim,):
                        found[key] = vec
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        rows = [(self.model_name, k, np.asarray(v, np.float32).tobytes()) for k, v in items.items()]
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)
            self._db.execute("COMMIT")

    def embed(
        self,
        texts: Sequence[str],
        embed_fn: Callable[[Sequence[str]], np.ndarray],
        batch_size: int = 32,
        on_batch: Callable[[int], None] | None = None,
    ) -> tuple[np.ndarray, int]:
        """Vectors for ``texts`` (in order), embedding only the missing ones in batches.

        Returns the (n, dim) array and how many texts were actually embedded. Each batch is written
        to the cache as soon as it is computed, so an interrupted run loses at most one batch.
        """
        keys = [text_key(t) for t in texts]
        cached = self.get_many(list(dict.fromkeys(keys)))
        missing = list(dict.fromkeys(k for k in keys if k not in cached))
        by_key = {k: t for k, t in zip(keys, texts, strict=True)}
        for start in range(0, len(missing), batch_size):
            batch_keys = missing[start : start + batch_size]
            vectors = embed_fn([by_key[k] for k in batch_keys])
            fresh = dict(zip(batch_keys, np.asarray(vectors, np.float32), strict=True))
            self.put_many(fresh)
            cached.update(fresh)
            if on_batch:
                on_batch(len(batch_keys))
        out = np.stack([cached[k] for k in keys]) if keys else np.zeros((0, self.dim), np.float32)
        return out, len(missing)

    def close(self) -> None:
        with self._lock:
            self._db.close()
