"""``@records_step``: times a node, counts its LLM calls and appends its step entry to ``state["steps"]``.

A node returns its state update plus a ``decision`` dict of plain-language facts (route, queries,
grades, retries...). The decorator removes ``decision`` from the update and appends one
``StepEntry`` ``{"node", "started_at", "ms", "decision"}``; tracing reads these entries from
``graph.stream(stream_mode="updates")``. LLM calls made inside the node are counted through a
LangChain callback (every chat-model start, so an internal structured-output retry counts too).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tracers.context import register_configure_hook
from langgraph.types import Overwrite

from tools.providers.structured_output import PROVIDER_NOTE_EVENT


class LLMUsageCounter(BaseCallbackHandler):
    """Counts chat-model calls and sums their token usage (when the model reports it)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_input_tokens = 0  # prompt tokens the provider served from its prompt cache
        self.provider_notes: list[str] = []  # a provider changed how it serves us (e.g. a fallback)

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if name == PROVIDER_NOTE_EVENT and isinstance(data, dict) and data.get("note"):
            with self._lock:
                self.provider_notes.append(str(data["note"]))

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self.calls += 1

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self.calls += 1

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                message = generation.message if isinstance(generation, ChatGeneration) else None
                usage = message.usage_metadata if isinstance(message, AIMessage) else None
                if usage:
                    with self._lock:
                        self.input_tokens += int(usage.get("input_tokens", 0))
                        self.output_tokens += int(usage.get("output_tokens", 0))
                        details = usage.get("input_token_details") or {}
                        self.cached_input_tokens += int(details.get("cache_read") or 0)


# Registered once: every LangChain run started while the variable is set reports to its counter.
_usage_counter: ContextVar[LLMUsageCounter | None] = ContextVar("ragpilot_llm_usage_counter", default=None)
register_configure_hook(_usage_counter, inheritable=True)


@contextmanager
def count_llm_usage() -> Iterator[LLMUsageCounter]:
    """Count every chat-model call made inside the ``with`` block (in this thread/context)."""
    counter = LLMUsageCounter()
    token = _usage_counter.set(counter)
    try:
        yield counter
    finally:
        _usage_counter.reset(token)


def records_step(node: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Decorate a node ``fn(state, config, **bound) -> update`` whose update may hold a ``decision``.

    The step entry is named after the function: a node's name is written once, in its ``def`` (and
    ``graph.py`` registers it under that name). The wrapped node returns the update without
    ``decision``, plus ``steps`` (its entry appended, or a fresh list when the node reset ``steps`` with
    ``Overwrite``) and its ``llm_calls`` / token counts.
    """
    node_name = node.__name__

    @functools.wraps(node)
    def run(state: Any, config: Any, **bound: Any) -> dict[str, Any]:
        started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        start = time.perf_counter()
        with count_llm_usage() as usage:
            update = dict(node(state, config, **bound) or {})
        ms = round((time.perf_counter() - start) * 1000, 1)
        decision = dict(update.pop("decision", None) or {})
        if usage.calls:
            decision["llm_calls"] = usage.calls
            if usage.input_tokens or usage.output_tokens:
                decision["llm_tokens"] = {"input": usage.input_tokens, "output": usage.output_tokens}
                if usage.cached_input_tokens:
                    decision["llm_tokens"]["cached_input"] = usage.cached_input_tokens
        if usage.provider_notes:
            decision["provider_notes"] = usage.provider_notes
        entry = {"node": node_name, "started_at": started_at, "ms": ms, "decision": decision}
        previous = update.get("steps")
        if isinstance(previous, Overwrite):
            update["steps"] = Overwrite([*previous.value, entry])
        else:
            update["steps"] = [*(previous or []), entry]
        for key, amount in (
            ("llm_calls", usage.calls),
            ("llm_input_tokens", usage.input_tokens),
            ("llm_output_tokens", usage.output_tokens),
        ):
            current = update.get(key)
            if isinstance(current, Overwrite):
                update[key] = Overwrite(current.value + amount)
            elif amount or current:
                update[key] = (current or 0) + amount
        return update

    return run
