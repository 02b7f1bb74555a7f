"""Chooses the web search provider from settings."""

from __future__ import annotations

from core.settings import Settings
from tools.web_search.base import WebSearch
from tools.web_search.unavailable import UnavailableWebSearch


def get_web_search(settings: Settings) -> WebSearch:
    """Tavily when ``web.provider`` is "auto" or "tavily" and TAVILY_API_KEY is set; otherwise an
    ``UnavailableWebSearch`` (``available`` False) whose reason names what is missing. Never raises."""
    if settings.web.provider == "none":
        return UnavailableWebSearch("web search is turned off (web.provider = 'none')")
    if not settings.tavily_api_key:
        return UnavailableWebSearch("TAVILY_API_KEY is not set")
    from tools.web_search.tavily import TavilyWebSearch  # imports requests/tavily only when used

    return TavilyWebSearch(settings.web, api_key=settings.tavily_api_key, base_url=settings.tavily_base_url)
