"""OpenAI (or any OpenAI-compatible endpoint) as ragpilot's chat model.

``ChatOpenAI`` with two changes the graph relies on: a failure after the client's own retries becomes
one ``ProviderUnavailable`` naming the endpoint and the cause (rate limit, HTTP status, timeout,
connection, malformed body), and ``with_structured_output`` behaves exactly like the local model's
(validated pydantic instance, one retry, then ``StructuredOutputError``).

Structured output (``llm.structured_output``): ``json_schema`` sends ``response_format={"type":
"json_schema"}``; ``json_mode`` sends ``{"type": "json_object"}`` and spells the schema out in a system
message, for servers without JSON-schema support. ``auto`` (the default) starts with ``json_schema``
and, when the server rejects that request outright (llama.cpp's server answers HTTP 500 "Input should
be 'text' or 'json_object'", others 400 or 422), switches this model to ``json_mode`` for the rest of
the process: one extra request per process, not per call, and the switch is announced once in the
log and in the step that met it (a ``provider_note`` custom event; see ``graphs/rag/nodes/_step.py``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.callbacks.manager import dispatch_custom_event
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, PrivateAttr

from core.errors import ProviderUnavailable
from tools.providers.openai_errors import describe_openai_failure
from tools.providers.structured_output import PROVIDER_NOTE_EVENT, OutputSchema, structured_output_runnable

logger = logging.getLogger(__name__)

StructuredOutputMethod = Literal["auto", "json_schema", "json_mode"]
# HTTP statuses with which servers reject a response_format they do not support (llama.cpp's: 500).
_REJECTION_STATUSES = frozenset({400, 422, 500, 501})


def rejects_response_format(error: BaseException) -> bool:
    """True when ``error`` (a ProviderUnavailable or its cause) is the server refusing the request
    itself, as opposed to a rate limit, a timeout or a connection failure."""
    cause = error.__cause__ if isinstance(error, ProviderUnavailable) else error
    return isinstance(cause, openai.APIStatusError) and cause.status_code in _REJECTION_STATUSES


class _StreamUsage:
    """Usage for a stream whose server does not report it (llama.cpp's server ignores
    ``stream_options.include_usage``): one output token per content chunk, which is how such servers
    stream, so the question's token budget still counts the answer. Marked ``usage_estimated``."""

    def __init__(self) -> None:
        self.reported = False
        self.content_chunks = 0

    def seen(self, chunk: ChatGenerationChunk) -> ChatGenerationChunk:
        message = chunk.message
        if isinstance(message, AIMessageChunk) and message.usage_metadata:
            self.reported = True
        if chunk.text:
            self.content_chunks += 1
        return chunk

    def estimate(self) -> ChatGenerationChunk | None:
        if self.reported or not self.content_chunks:
            return None
        usage = UsageMetadata(
            input_tokens=0, output_tokens=self.content_chunks, total_tokens=self.content_chunks
        )
        message = AIMessageChunk(
            content="", usage_metadata=usage, response_metadata={"usage_estimated": True}
        )
        return ChatGenerationChunk(message=message)


class RagpilotChatOpenAI(ChatOpenAI):
    """ChatOpenAI with typed failures and provider-neutral structured output."""

    structured_output_method: StructuredOutputMethod = "auto"
    # Set when an ``auto`` model met a server that rejects json_schema: later calls go to json_mode.
    _json_schema_rejected: str | None = PrivateAttr(None)

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
        counter = _StreamUsage()
        with self._typed_failures():
            for chunk in super()._stream(*args, **kwargs):
                yield counter.seen(chunk)
        if (estimate := counter.estimate()) is not None:
            yield estimate

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        counter = _StreamUsage()
        with self._typed_failures():
            async for chunk in super()._astream(*args, **kwargs):
                yield counter.seen(chunk)
        if (estimate := counter.estimate()) is not None:
            yield estimate

    def with_structured_output(  # type: ignore[override]
        self,
        schema: type[BaseModel] | dict[str, Any],
        *,
        include_raw: bool = False,
        method: StructuredOutputMethod | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        """A Runnable returning a validated ``schema`` instance (a dict for a JSON-schema dict).

        ``method`` defaults to ``llm.structured_output`` (see the module docstring for ``auto``). An
        invalid reply is retried once (with twice the token budget, and the validation error shown
        unless the reply was merely cut off), then raises ``StructuredOutputError``. ``strict`` and
        other ChatOpenAI-specific keywords are ignored.
        """
        output_schema = OutputSchema.from_user(schema)
        chosen = method or self.structured_output_method
        if chosen not in ("auto", "json_schema", "json_mode"):
            raise ValueError(
                f"structured output method must be 'auto', 'json_schema' or 'json_mode', got {chosen!r}"
            )
        if chosen != "auto":
            return self._structured(output_schema, chosen, include_raw)
        as_schema = self._structured(output_schema, "json_schema", include_raw)
        as_json_mode = self._structured(output_schema, "json_mode", include_raw)

        def run(model_input: LanguageModelInput, config: RunnableConfig) -> Any:
            if self._json_schema_rejected is None:
                try:
                    return as_schema.invoke(model_input, config)
                except ProviderUnavailable as exc:
                    if not rejects_response_format(exc):
                        raise
                    self._note_json_schema_rejected(exc, config)
            return as_json_mode.invoke(model_input, config)

        async def arun(model_input: LanguageModelInput, config: RunnableConfig) -> Any:
            if self._json_schema_rejected is None:
                try:
                    return await as_schema.ainvoke(model_input, config)
                except ProviderUnavailable as exc:
                    if not rejects_response_format(exc):
                        raise
                    self._note_json_schema_rejected(exc, config)
            return await as_json_mode.ainvoke(model_input, config)

        runnable: Runnable[LanguageModelInput, Any] = RunnableLambda(
            run, afunc=arun, name=f"structured_{output_schema.name}_auto"
        )
        return runnable

    def _note_json_schema_rejected(self, error: ProviderUnavailable, config: RunnableConfig) -> None:
        first_time = self._json_schema_rejected is None
        self._json_schema_rejected = error.reason
        note = (
            f"{self._provider_label()} rejected response_format json_schema ({error.reason}); "
            "structured output now uses json_object with the schema in the prompt "
            "(set llm.structured_output=json_mode to skip the first attempt)"
        )
        if first_time:
            logger.warning("%s", note)
        with contextlib.suppress(Exception):  # outside a run there is no callback to tell
            dispatch_custom_event(PROVIDER_NOTE_EVENT, {"note": note}, config=config)

    def _structured(
        self, output_schema: OutputSchema, method: Literal["json_schema", "json_mode"], include_raw: bool
    ) -> Runnable[LanguageModelInput, Any]:
        if method == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": output_schema.name, "schema": output_schema.json_schema},
            }
        else:
            response_format = {"type": "json_object"}
        first = self.bind(response_format=response_format)
        retry_budget = {"max_tokens": self.max_tokens * 2} if self.max_tokens else {}
        retry = self.bind(response_format=response_format, **retry_budget)
        return structured_output_runnable(
            first, retry, output_schema, include_raw=include_raw, schema_in_prompt=method == "json_mode"
        )
