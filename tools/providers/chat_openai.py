"""OpenAI (or any OpenAI-compatible endpoint) as ragpilot's chat model.

``ChatOpenAI`` with two changes the graph relies on: a failure after the client's own retries becomes
one ``ProviderUnavailable`` naming the endpoint and the cause (rate limit, HTTP status, timeout,
connection, malformed body), and ``with_structured_output`` behaves exactly like the local model's
(validated pydantic instance, one retry, then ``StructuredOutputError``).

Structured output uses ``response_format={"type": "json_schema"}`` by default; servers that only
support JSON mode (``{"type": "json_object"}``) are served with ``llm.structured_output="json_mode"``,
which also spells the schema out in a system message. We do not fall back automatically: a silent
second request per call would double latency and hide a misconfiguration.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from core.errors import ProviderUnavailable
from tools.providers.openai_errors import describe_openai_failure
from tools.providers.structured_output import OutputSchema, structured_output_runnable


class RagpilotChatOpenAI(ChatOpenAI):
    """ChatOpenAI with typed failures and provider-neutral structured output."""

    structured_output_method: Literal["json_schema", "json_mode"] = "json_schema"

    def _provider_label(self) -> str:
        return f"OpenAI chat model '{self.model_name}' at {self.openai_api_base or 'api.openai.com'}"

    @contextlib.contextmanager
    def _typed_failures(self) -> Iterator[None]:
        try:
            yield
        except (openai.APIError, ValueError, TypeError) as exc:
            cause = describe_openai_failure(
                exc,
                timeout_setting="llm.timeout_s",
                timeout_s=self._timeout_seconds(),
                max_retries=self.max_retries or 0,
            )
            if cause is None:
                raise
            raise ProviderUnavailable(self._provider_label(), cause) from exc

    def _timeout_seconds(self) -> float | None:
        timeout = self.request_timeout
        return timeout if isinstance(timeout, int | float) else None

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._typed_failures():
            try:
                return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
            except openai.LengthFinishReasonError as exc:
                return self._truncated_result(exc)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._typed_failures():
            try:
                return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
            except openai.LengthFinishReasonError as exc:
                return self._truncated_result(exc)

    def _truncated_result(self, exc: openai.LengthFinishReasonError) -> ChatResult:
        # With a response_format, the client refuses to return a reply cut off by max_tokens; we return
        # it as an ordinary message (finish_reason "length") so structured output can retry it.
        return self._create_chat_result(exc.completion)

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        with self._typed_failures():
            yield from super()._stream(*args, **kwargs)

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        with self._typed_failures():
            async for chunk in super()._astream(*args, **kwargs):
                yield chunk

    def with_structured_output(  # type: ignore[override]
        self,
        schema: type[BaseModel] | dict[str, Any],
        *,
        include_raw: bool = False,
        method: Literal["json_schema", "json_mode"] | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        """A Runnable returning a validated ``schema`` instance (a dict for a JSON-schema dict).

        ``method`` defaults to ``llm.structured_output``. An invalid reply is retried once (with twice
        the token budget, and the validation error shown unless the reply was merely cut off), then
        raises ``StructuredOutputError``. ``strict`` and other ChatOpenAI-specific keywords are ignored.
        """
        output_schema = OutputSchema.from_user(schema)
        chosen = method or self.structured_output_method
        if chosen == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": output_schema.name, "schema": output_schema.json_schema},
            }
        elif chosen == "json_mode":
            response_format = {"type": "json_object"}
        else:
            raise ValueError(f"structured output method must be 'json_schema' or 'json_mode', got {chosen!r}")
        first = self.bind(response_format=response_format)
        retry_budget = {"max_tokens": self.max_tokens * 2} if self.max_tokens else {}
        retry = self.bind(response_format=response_format, **retry_budget)
        return structured_output_runnable(
            first, retry, output_schema, include_raw=include_raw, schema_in_prompt=chosen == "json_mode"
        )
