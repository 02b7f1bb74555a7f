"""OpenAI's chat-completions wire format, as much of it as ragpilot reads and writes.

Requests accept the fields chat UIs and SDKs send (sampling options, ``user``, tools...) and ignore
those ragpilot has no use for: its answers come from its own graph and prompts. Two extension fields
travel beside OpenAI's: ``thread_id`` in a request (continue a server-side thread; the OpenAI SDK sends
it with ``extra_body``) and ``ragpilot`` in a response (citations, short answer, route, refusal, budget).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.server.schemas import THREAD_ID_PATTERN
from core.answer import Citation

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Role
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        """The message's text: a string, or its text parts joined (images and audio are not read)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text or "" for part in self.content or [] if part.type == "text")


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    thread_id: str | None = Field(
        None,
        pattern=THREAD_ID_PATTERN,
        description="ragpilot extension: continue this server-side thread (its history replaces the "
        "earlier messages of the request; only the last user message is read)",
    )


class RagpilotExtension(BaseModel):
    """What a program reads beside the text: the answer's sources and how it was reached."""

    citations: list[Citation]
    short_answer: str
    route: str | None
    refused: bool
    refusal_reason: str | None
    partial: bool
    budget_exhausted: str | None
    run_id: str
    thread_id: str | None
    standalone_question: str | None


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "ragpilot"
    description: str = ""


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorBody(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


def error_payload(
    message: str, type_: str, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": ErrorBody(message=message, type=type_, param=param, code=code).model_dump()}
