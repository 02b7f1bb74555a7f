"""ragpilot's application layer and public face. ``from agent import Agent``; ``Agent().ask("q") -> Answer``.

The ground it stands on (settings, errors, value types) is ``core``; ``load_settings``, ``Settings``,
``Answer`` and ``Citation`` are re-exported here so one import serves an application.
"""

from __future__ import annotations

from agent.agent import Agent
from core.answer import Answer, Citation
from core.settings import Settings, load_settings
from graphs.rag.graph import build_graph

__all__ = ["Agent", "Answer", "Citation", "Settings", "build_graph", "load_settings"]
