"""The web search interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from tools.knowledge_base.records import Hit


class WebSearch(ABC):
    name: str

    @property
    def available(self) -> bool:
        """False when searching would certainly fail (no key configured), so callers can skip the web."""
        return True

    @abstractmethod
    def search(self, query: str, max_results: int, include_domains: Sequence[str] = ()) -> list[Hit]:
        """Web results as hits with ``origin='web'`` and ``url`` set. Raises ``ProviderUnavailable``
        when no key is configured or the service fails after bounded retries."""
