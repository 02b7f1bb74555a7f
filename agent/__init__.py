"""ragpilot's public face. ``from agent import Agent``; ``Agent().ask("question") -> Answer``.

Exports are resolved lazily (module ``__getattr__``): importing ``agent.settings`` or ``agent.errors``
must not pull in the graph, which itself imports ``agent.settings``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.agent import Agent
    from agent.answer import Answer, Citation
    from agent.settings import Settings, load_settings
    from graphs.rag.graph import build_graph

_EXPORTS = {
    "Agent": "agent.agent",
    "Answer": "agent.answer",
    "Citation": "agent.answer",
    "Settings": "agent.settings",
    "load_settings": "agent.settings",
    "build_graph": "graphs.rag.graph",
}

__all__ = ["Agent", "Answer", "Citation", "Settings", "build_graph", "load_settings"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
