"""Per-run configuration read from LangGraph's ``RunnableConfig`` (identity and per-call overrides).

Everything else comes from the ``NodeOptions`` bound when the graph is built. The caller's ACL groups
come from ``config["configurable"]["user_groups"]`` (never from the question or a tool argument), and
default to ``settings.user_groups``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from langchain_core.runnables import RunnableConfig
from pydantic import ValidationError

from core.errors import ConfigError
from core.settings import GraphSettings, QuestionBudget
from graphs.rag.node_options import NodeOptions

QueryTransform = str


@dataclass(frozen=True)
class RagConfiguration:
    user_groups: tuple[str, ...]
    query_transform: QueryTransform
    budget: QuestionBudget

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None, options: NodeOptions) -> RagConfiguration:
        """Read ``configurable.user_groups``, ``.query_transform`` and ``.budget`` (a ``QuestionBudget``
        or its dict; default ``settings.graph.budget``); ConfigError when invalid."""
        configurable: dict[str, Any] = dict((config or {}).get("configurable") or {})
        groups = configurable.get("user_groups", list(options.default_groups))
        if isinstance(groups, str) or not isinstance(groups, list | tuple):
            raise ConfigError("configurable.user_groups must be a list of group names")
        if not groups or any(not isinstance(g, str) or not g.strip() for g in groups):
            raise ConfigError("configurable.user_groups must be a non-empty list of non-empty group names")
        transform = configurable.get("query_transform", options.graph.query_transform)
        allowed = get_args(GraphSettings.model_fields["query_transform"].annotation)
        if transform not in allowed:
            raise ConfigError(
                f"configurable.query_transform must be one of {', '.join(allowed)}, got {transform!r}"
            )
        budget = configurable.get("budget") or options.graph.budget
        if not isinstance(budget, QuestionBudget):
            try:
                budget = QuestionBudget.model_validate(budget)
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(part) for part in problem["loc"])
                raise ConfigError(f"configurable.budget.{where}: {problem['msg']}") from exc
        return cls(user_groups=tuple(groups), query_transform=transform, budget=budget)
