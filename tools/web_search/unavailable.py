"""The web search used when none is configured: it says so instead of failing somewhere deeper."""

from __future__ import annotations

from collections.abc import Sequence

from core.errors import ProviderUnavailable
from tools.knowledge_base.records import Hit
from tools.web_search.base import WebSearch


class UnavailableWebSearch(WebSearch):
    """``available`` is False and every ``search`` raises ``ProviderUnavailable("web search", reason)``,
    so the graph falls back to the knowledge base alone."""

    name = "unavailable"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    @property
    def available(self) -> bool:
        return False

    def search(self, query: str, max_results: int, include_domains: Sequence[str] = ()) -> list[Hit]:
        raise ProviderUnavailable("web search", self.reason)
