"""The OpenAI chat path against a real OpenAI-compatible model server: llama.cpp's own
(``python -m llama_cpp.server``) with the bundled GGUF. What the fake server hid, this one shows:
it rejects ``response_format: json_schema`` (HTTP 500), so structured output must fall back."""

from __future__ import annotations

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from pydantic import BaseModel, Field, SecretStr

from tools.providers.chat_openai import RagpilotChatOpenAI

pytestmark = pytest.mark.llm


class Capital(BaseModel):
    country: str
    capital: str = Field(description="the capital city")


class Notes(BaseCallbackHandler):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def on_custom_event(self, name, data, *, run_id, **kwargs):  # type: ignore[no-untyped-def]
        self.notes.append(data["note"])


def fresh_model(server, **options) -> RagpilotChatOpenAI:  # type: ignore[no-untyped-def]
    """A model of its own (not the factory's per-process cache), so each test sees a first call."""
    return RagpilotChatOpenAI(
        model=server.model, base_url=server.base_url, api_key=SecretStr("unused"), temperature=0.0,
        max_completion_tokens=128, max_retries=0, stream_usage=True, **options,
    )  # fmt: skip


def test_structured_output_falls_back_to_json_object_and_says_so(llama_server) -> None:  # type: ignore[no-untyped-def]
    model = fresh_model(llama_server)
    notes = Notes()

    answer = model.with_structured_output(Capital).invoke(
        "What is the capital of France? Reply as JSON.", {"callbacks": [notes]}
    )

    assert isinstance(answer, Capital) and "paris" in answer.capital.lower()
    assert len(notes.notes) == 1 and "rejected response_format json_schema" in notes.notes[0]
    assert "Input should be 'text' or 'json_object'" in notes.notes[0]  # the server's own words


def test_json_schema_alone_fails_against_this_server(llama_server) -> None:  # type: ignore[no-untyped-def]
    from core.errors import ProviderUnavailable

    with pytest.raises(ProviderUnavailable, match="HTTP 500"):
        fresh_model(llama_server, structured_output_method="json_schema").with_structured_output(
            Capital
        ).invoke("What is the capital of France?")


def test_streaming_yields_pieces_and_counts_the_output_the_server_does_not_report(llama_server) -> None:  # type: ignore[no-untyped-def]
    chunks = list(fresh_model(llama_server).stream("Count from one to five in words."))

    pieces = [c for c in chunks if c.content]
    assert len(pieces) > 3 and "three" in "".join(str(c.content) for c in pieces).lower()
    # This server ignores stream_options.include_usage; the provider counts one token per piece.
    (usage,) = [c for c in chunks if c.usage_metadata]
    assert usage.usage_metadata["output_tokens"] == len(pieces)
    assert usage.response_metadata["usage_estimated"] is True
