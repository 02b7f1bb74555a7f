"""Calling the chat model from a node: plain text or a validated pydantic object, never a crash on
malformed output (the caller gets the error text and falls back)."""

from __future__ import annotations

import math
from typing import Any, TypeVar

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


def ask_text_masking_unlikely(
    llm: BaseChatModel,
    system: str,
    user: str,
    config: RunnableConfig | None,
    words: tuple[str, ...],
    below: float,
) -> tuple[str, dict[str, Any]]:
    """The reply as text, where an opening with one of ``words`` is kept only if its first token carries
    at least ``below`` of the probability (the local model's ``unlikely_opening``); with what the model
    reported: ``{"probability": p, "masked": bool}``, empty when it reports nothing."""
    reply = llm.bind(unlikely_opening={"words": list(words), "below": below}).invoke(
        _messages(system, user), config
    )
    return reply.text.strip(), dict(reply.response_metadata.get("unlikely_opening") or {})


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


# --- yes/no decisions read from the first token's probabilities (issue 11, item 3) -----------------

FIRST_TOKEN_ALTERNATIVES = 20


def first_token_alternatives(reply: BaseMessage) -> list[tuple[str, float]] | None:
    """The first reply token's most likely alternatives as ``(text, probability)``, best first: the
    local model's ``first_token_logprobs`` or OpenAI's ``logprobs.content[0].top_logprobs``; None when
    the model did not report them (a fake, or a server without logprobs)."""
    metadata = reply.response_metadata or {}
    alternatives = metadata.get("first_token_logprobs")
    if alternatives is None:
        content = (metadata.get("logprobs") or {}).get("content") or []
        alternatives = content[0].get("top_logprobs") if content else None
    if not alternatives:
        return None
    return [(str(a["token"]), math.exp(float(a["logprob"]))) for a in alternatives]


def probability_of_opening(alternatives: list[tuple[str, float]], words: tuple[str, ...]) -> float:
    """The probability that the reply opens with one of ``words`` (case-insensitive): the mass of the
    first-token alternatives that are a start of one of them ("NOT", " NOT", "N" of "NOT_FOUND")."""
    wanted = [w.casefold() for w in words]
    total = 0.0
    for token, probability in alternatives:
        piece = token.strip().casefold()
        if piece and any(w.startswith(piece) for w in wanted):
            total += probability
    return min(total, 1.0)


def ask_with_first_token(
    llm: BaseChatModel, system: str, user: str, config: RunnableConfig | None, **options: Any
) -> tuple[str, list[tuple[str, float]] | None]:
    """The reply text and its first token's alternatives (None when the model does not report them)."""
    reply = llm.bind(logprobs=True, top_logprobs=FIRST_TOKEN_ALTERNATIVES, **options).invoke(
        _messages(system, user), config
    )
    return reply.text.strip(), first_token_alternatives(reply)


def probability_yes(
    llm: BaseChatModel, system: str, user: str, config: RunnableConfig | None
) -> float | None:
    """P(yes) / (P(yes) + P(no)) of a one-word yes/no reply, from one output token; None without logprobs
    or when neither word is among the likely first tokens."""
    _, alternatives = ask_with_first_token(llm, system, user, config, max_tokens=1)
    if alternatives is None:
        return None
    yes = probability_of_opening(alternatives, ("yes", "是"))
    no = probability_of_opening(alternatives, ("no", "否"))
    return yes / (yes + no) if yes + no > 0 else None
