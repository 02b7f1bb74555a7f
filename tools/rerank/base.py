"""The reranker interface: reorder hits by relevance to one query."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from tools.knowledge_base.records import Hit


class Reranker(ABC):
    name: str
    #: Whether ``rerank_score`` is a relevance probability that CRAG's thresholds apply to.
    calibrated: bool = True

    @abstractmethod
    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        """Return at most ``top_n`` hits, best first, each with ``rerank_score`` set and ``score`` updated.

        Implementations truncate the passage (never the query) to the model's input window. Raises
        ``ProviderUnavailable`` when a hosted provider fails after its retries.
        """
