"""Per-run configuration read from LangGraph's ``RunnableConfig`` (identity and per-call overrides).

Everything else comes from ``Settings`` bound when the graph is built. The caller's ACL groups come
from ``config["configurable"]["user_groups"]`` (never from the question or a tool argument), and
default to ``settings.user_groups``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from langchain_core.runnables import RunnableConfig

from core.errors import ConfigError
from core.settings import GraphSettings, Settings

QueryTransform = str


@dataclass(frozen=True)
class RagConfiguration:
    user_groups: tuple[str, ...]
    query_transform: QueryTransform

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None, settings: Settings) -> RagConfiguration:
        """Read ``configurable.user_groups`` and ``configurable.query_transform``; ConfigError when invalid."""
        configurable: dict[str, Any] = dict((config or {}).get("configurable") or {})
        groups = configurable.get("user_groups", settings.user_groups)
        if isinstance(groups, str) or not isinstance(groups, list | tuple):
            raise ConfigError("configurable.user_groups must be a list of group names")
        if not groups or any(not isinstance(g, str) or not g.strip() for g in groups):
            raise ConfigError("configurable.user_groups must be a non-empty list of non-empty group names")
        transform = configurable.get("query_transform", settings.graph.query_transform)
        allowed = get_args(GraphSettings.model_fields["query_transform"].annotation)
        if transform not in allowed:
            raise ConfigError(
                f"configurable.query_transform must be one of {', '.join(allowed)}, got {transform!r}"
            )
        return cls(user_groups=tuple(groups), query_transform=transform)
