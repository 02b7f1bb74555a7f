"""Structured output that behaves the same on every chat model ragpilot uses.

``model.with_structured_output(Schema)`` returns a Runnable whose result is a validated ``Schema``
instance (or a dict for a JSON-schema dict), whichever provider is behind it. The model is asked for a
JSON reply (llama.cpp constrains it with a grammar, OpenAI with ``response_format``); we parse and
validate it ourselves; an invalid reply is retried once with the error shown to the model, then becomes
one ``StructuredOutputError`` that the graph catches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, ValidationError

from core.errors import StructuredOutputError
from prompts import load_prompt

# The custom callback event a provider dispatches when it changes how it serves a run (a fallback);
# the graph's step recorder lists these notes in the step's trace entry.
PROVIDER_NOTE_EVENT = "provider_note"

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class OutputSchema:
    """The schema a structured call must satisfy, as pydantic model and/or plain JSON schema."""

    name: str
    json_schema: dict[str, Any]
    pydantic_model: type[BaseModel] | None

    @classmethod
    def from_user(cls, schema: type[BaseModel] | dict[str, Any]) -> OutputSchema:
        """Accept a pydantic v2 model class or a JSON-schema dict; anything else is a TypeError."""
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return cls(_clean_name(schema.__name__), schema.model_json_schema(), schema)
        if isinstance(schema, dict) and schema.get("type") == "object":
            return cls(_clean_name(str(schema.get("title", "output"))), schema, None)
        raise TypeError(
            "with_structured_output expects a pydantic BaseModel subclass or a JSON schema dict with "
            f"type 'object', got {schema!r}"
        )

    def parse(self, text: str) -> BaseModel | dict[str, Any]:
        """Parse a model reply; raises ValueError (bad JSON, not an object) or pydantic ValidationError."""
        stripped = text.strip()
        fenced = _FENCE.match(stripped)
        if fenced:  # OpenAI-compatible servers in json_mode sometimes still wrap the JSON in a fence
            stripped = fenced.group(1)
        if self.pydantic_model is not None:
            return self.pydantic_model.model_validate_json(stripped)
        value = json.loads(stripped)
        if not isinstance(value, dict):
            raise ValueError(f"expected a JSON object, got {type(value).__name__}")
        return value

    def as_prompt(self) -> str:
        """The schema spelled out for models that are not constrained by it (OpenAI json_mode)."""
        return load_prompt("structured_output_schema").format(schema=json.dumps(self.json_schema))


def _clean_name(name: str) -> str:
    return _SCHEMA_NAME.sub("_", name)[:64] or "output"


def as_messages(model_input: LanguageModelInput) -> list[BaseMessage]:
    """Normalise anything a chat model accepts (str, PromptValue, message-likes) into messages."""
    if isinstance(model_input, PromptValue):
        return model_input.to_messages()
    if isinstance(model_input, str):
        return [HumanMessage(model_input)]
    return convert_to_messages(model_input)  # type: ignore[arg-type]


def describe_failure(error: Exception) -> str:
    if isinstance(error, ValidationError):
        problems = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in error.errors()]
        return "schema validation failed: " + "; ".join(problems[:5])
    return f"not valid JSON ({error})"


def structured_output_runnable(
    first_attempt: Runnable[Sequence[BaseMessage], BaseMessage],
    retry_attempt: Runnable[Sequence[BaseMessage], BaseMessage],
    schema: OutputSchema,
    *,
    include_raw: bool,
    schema_in_prompt: bool = False,
) -> Runnable[LanguageModelInput, Any]:
    """Wrap two bound chat models (first try, retry) into the structured-output Runnable described above.

    ``retry_attempt`` should allow more tokens than ``first_attempt``: a reply cut off by the budget is
    retried as is; any other invalid reply is retried with the validation error shown to the model.

    With ``include_raw`` the result is ``{"raw": AIMessage, "parsed": obj | None, "parsing_error": exc |
    None}`` (LangChain's convention) and a second failure is returned, not raised.
    """

    def prepare(model_input: LanguageModelInput) -> list[BaseMessage]:
        messages = as_messages(model_input)
        if schema_in_prompt:
            messages = [SystemMessage(schema.as_prompt()), *messages]
        return messages

    def retry_messages(messages: list[BaseMessage], raw: BaseMessage, error: Exception) -> list[BaseMessage]:
        if raw.response_metadata.get("finish_reason") == "length":
            # Cut off by the token budget: the retry's larger budget is the fix; showing the model its
            # truncated JSON only confuses a small model.
            return messages
        feedback = load_prompt("structured_output_retry").format(error=describe_failure(error))
        return [*messages, AIMessage(str(raw.text)), HumanMessage(feedback)]

    def finish(raw: BaseMessage, parsed: Any, error: Exception | None) -> Any:
        if error is None:
            return {"raw": raw, "parsed": parsed, "parsing_error": None} if include_raw else parsed
        failure = StructuredOutputError(schema.name, describe_failure(error), raw.text)
        if include_raw:
            return {"raw": raw, "parsed": None, "parsing_error": failure}
        raise failure from error

    def try_parse(raw: BaseMessage) -> tuple[Any, Exception | None]:
        try:
            return schema.parse(raw.text), None
        except (ValueError, ValidationError) as exc:  # JSONDecodeError is a ValueError
            return None, exc

    def run(model_input: LanguageModelInput, config: RunnableConfig) -> Any:
        messages = prepare(model_input)
        raw = first_attempt.invoke(messages, config)
        parsed, error = try_parse(raw)
        if error is not None:
            raw = retry_attempt.invoke(retry_messages(messages, raw, error), config)
            parsed, error = try_parse(raw)
        return finish(raw, parsed, error)

    async def arun(model_input: LanguageModelInput, config: RunnableConfig) -> Any:
        messages = prepare(model_input)
        raw = await first_attempt.ainvoke(messages, config)
        parsed, error = try_parse(raw)
        if error is not None:
            raw = await retry_attempt.ainvoke(retry_messages(messages, raw, error), config)
            parsed, error = try_parse(raw)
        return finish(raw, parsed, error)

    runnable: Runnable[LanguageModelInput, Any] = RunnableLambda(
        run, afunc=arun, name=f"structured_{schema.name}"
    )
    return runnable
