"""The run's own context: who asks (ACL groups) and this run's overrides (query transform, budget).

It is LangGraph's ``context_schema`` for the ragpilot graph: the caller passes
``graph.stream(input, config, context=RunContext(...))`` (or its dict), LangGraph validates it once
when the run starts, and every node reads the same value from ``runtime.context``. The caller's ACL
groups come from here (never from the question or a tool argument) and default to
``settings.user_groups``.

Graphs embedded the older way pass the same keys in ``config["configurable"]`` (``user_groups``,
``query_transform``, ``budget``); they are validated by the same model, so a parent graph that forwards
its config keeps its caller's groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from core.errors import ConfigError
from core.settings import QueryTransformName, QuestionBudget
from graphs.rag.node_options import NodeOptions

GroupName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class RunContext(BaseModel):
    """Per-run settings; a field left unset takes its default from ``NodeOptions`` (the settings)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_groups: tuple[GroupName, ...] | None = Field(None, min_length=1)
    query_transform: QueryTransformName | None = None
    budget: QuestionBudget | None = None

    @classmethod
    def parse(cls, values: Mapping[str, Any], where: str = "context") -> RunContext:
        """``values`` validated; ConfigError naming the field (``<where>.budget.llm_calls``) when not."""
        try:
            return cls.model_validate(dict(values))
        except ValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(str(part) for part in problem["loc"])
            raise ConfigError(f"{where}.{field}: {problem['msg']}") from exc

    def groups(self, options: NodeOptions) -> list[str]:
        return list(self.user_groups or options.default_groups)

    def transform(self, options: NodeOptions) -> str:
        return str(self.query_transform or options.graph.query_transform)

    def question_budget(self, options: NodeOptions) -> QuestionBudget:
        return self.budget or options.graph.budget


def run_context(runtime: Runtime[Any] | None, config: RunnableConfig | None) -> RunContext:
    """This run's context: LangGraph's ``context`` when the caller passed one of ours, else the
    ``configurable`` keys of an embedding graph's config (validated by the same model)."""
    context = runtime.context if runtime is not None else None
    if isinstance(context, RunContext):
        return context
    configurable = (config or {}).get("configurable") or {}
    keys: dict[str, Any] = {
        k: configurable[k] for k in ("user_groups", "query_transform", "budget") if k in configurable
    }
    return RunContext.parse(keys, where="configurable")
