"""Calling the chat model from a node: plain text or a validated pydantic object, never a crash on
malformed output (the caller gets the error text and falls back)."""

from __future__ import annotations

from typing import TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ValidationError

from core.errors import StructuredOutputError

Model = TypeVar("Model", bound=BaseModel)


def _messages(system: str, user: str) -> list[BaseMessage]:
    return [SystemMessage(system), HumanMessage(user)]


def ask_text(llm: BaseChatModel, system: str, user: str, config: RunnableConfig | None) -> str:
    """The model's reply as text (content parts joined), stripped."""
    reply = llm.invoke(_messages(system, user), config)
    return reply.text.strip()


def ask_structured(
    llm: BaseChatModel, schema: type[Model], system: str, user: str, config: RunnableConfig | None
) -> tuple[Model | None, str | None]:
    """``(object, None)`` on success, ``(None, reason)`` when the reply stayed invalid after the model's
    own retry (``StructuredOutputError``) or failed validation here."""
    try:
        result = llm.with_structured_output(schema).invoke(_messages(system, user), config)
    except StructuredOutputError as exc:
        return None, str(exc)
    except (OutputParserException, ValidationError) as exc:
        return None, f"model output for schema '{schema.__name__}' is invalid: {exc}"
    if isinstance(result, schema):
        return result, None
    try:
        return schema.model_validate(result), None
    except ValidationError as exc:
        return None, f"model output for schema '{schema.__name__}' is invalid: {exc}"


def one_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of a model reply, without surrounding quotes, at most ``limit`` chars."""
    for line in text.splitlines():
        line = line.strip().strip("\"“”'").strip()
        if line:
            return line[:limit]
    return ""
