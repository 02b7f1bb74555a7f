"""The OpenAI chat path, over real HTTP against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from core.errors import ProviderUnavailable, StructuredOutputError
from core.settings import Settings, load_settings
from tests.fakes.http_server import FakeResponse
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion_body
from tools.providers.chat_factory import get_chat_model


class Verdict(BaseModel):
    supported: bool
    reason: str = Field(description="one short sentence")


@pytest.fixture
def api() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def openai_settings(api: FakeOpenAIServer, **llm: object) -> Settings:
    return load_settings(
        openai_api_key="test-key",
        llm={"provider": "openai", "base_url": api.base_url, "model": "gpt-test", "max_retries": 2, **llm},
    )


def test_the_factory_returns_a_chat_openai_pointed_at_the_configured_endpoint(api):
    model = get_chat_model(openai_settings(api))

    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == api.base_url


def test_invoke_returns_the_reply_with_usage_and_sends_the_settings(api):
    api.script_chat("Paris")
    model = get_chat_model(openai_settings(api, max_tokens=64))

    reply = model.invoke([SystemMessage("Answer briefly."), HumanMessage("Capital of France?")])

    assert reply.content == "Paris"
    assert reply.usage_metadata["input_tokens"] == 11
    (request,) = api.chat_requests()
    assert request["model"] == "gpt-test"
    assert (request.get("max_tokens") or request.get("max_completion_tokens")) == 64
    assert request["temperature"] == 0.0
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    headers = {
        k.lower(): v for k, v in api.http.requests_to("POST", "/v1/chat/completions")[0].headers.items()
    }
    assert headers["authorization"] == "Bearer test-key"


def test_stream_yields_the_reply_piece_by_piece_with_callbacks(api):
    api.script_chat("The capital of France is Paris")
    tokens: list[str] = []

    class TokenRecorder(BaseCallbackHandler):
        def on_llm_new_token(self, token: str, **kwargs: object) -> None:
            tokens.append(token)

    model = get_chat_model(openai_settings(api))
    chunks = list(model.stream("Capital of France?", config={"callbacks": [TokenRecorder()]}))

    text_chunks = [c.content for c in chunks if c.content]
    assert len(text_chunks) == 6
    assert "".join(text_chunks) == "The capital of France is Paris"
    assert "".join(tokens) == "The capital of France is Paris"
    assert api.chat_requests()[0]["stream"] is True


def test_a_rate_limited_request_is_retried_after_the_servers_delay(api):
    api.script_chat(FakeOpenAIServer.rate_limited(retry_after_ms=50), "Paris")

    reply = get_chat_model(openai_settings(api)).invoke("Capital of France?")

    assert reply.content == "Paris"
    assert len(api.chat_requests()) == 2


def test_server_errors_beyond_the_retry_bound_raise_provider_unavailable(api):
    api.script_chat(*(FakeOpenAIServer.server_error(500) for _ in range(3)), "never reached")

    with pytest.raises(ProviderUnavailable) as excinfo:
        get_chat_model(openai_settings(api, max_retries=2)).invoke("Capital of France?")

    assert "HTTP 500 after 2 retries" in str(excinfo.value)
    assert api.base_url in str(excinfo.value)
    assert len(api.chat_requests()) == 3  # the first try and two retries, no more


def test_a_reply_slower_than_the_timeout_raises_provider_unavailable(api):
    api.script_chat(FakeOpenAIServer.slow(2.0))

    with pytest.raises(ProviderUnavailable, match=r"no reply within 0.3 s \(llm.timeout_s\)"):
        get_chat_model(openai_settings(api, timeout_s=0.3, max_retries=0)).invoke("Capital of France?")


def test_a_malformed_json_body_raises_provider_unavailable(api):
    api.script_chat(FakeOpenAIServer.malformed_body())

    with pytest.raises(ProviderUnavailable, match="malformed response body"):
        get_chat_model(openai_settings(api, max_retries=0)).invoke("Capital of France?")


def test_a_non_json_body_raises_provider_unavailable(api):
    api.script_chat(FakeResponse(raw_body=b"<html>proxy error</html>", headers={"Content-Type": "text/html"}))

    with pytest.raises(ProviderUnavailable, match="malformed response body"):
        get_chat_model(openai_settings(api, max_retries=0)).invoke("Capital of France?")


def test_structured_output_returns_a_validated_instance_via_json_schema(api):
    api.script_chat('{"supported": true, "reason": "The passage says so."}')

    verdict = get_chat_model(openai_settings(api)).with_structured_output(Verdict).invoke("Is it supported?")

    assert verdict == Verdict(supported=True, reason="The passage says so.")
    response_format = api.chat_requests()[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Verdict"
    assert set(response_format["json_schema"]["schema"]["properties"]) == {"supported", "reason"}


def test_structured_output_accepts_a_json_schema_dict_and_returns_a_dict(api):
    api.script_chat('{"label": "single"}')
    schema = {
        "title": "Route",
        "type": "object",
        "properties": {"label": {"type": "string"}},
        "required": ["label"],
    }

    result = get_chat_model(openai_settings(api)).with_structured_output(schema).invoke("Route this")

    assert result == {"label": "single"}


def test_an_invalid_structured_reply_is_retried_once_with_the_error_shown(api):
    api.script_chat('{"supported": "perhaps"}', '{"supported": false, "reason": "Not stated."}')

    verdict = get_chat_model(openai_settings(api)).with_structured_output(Verdict).invoke("Is it supported?")

    assert verdict == Verdict(supported=False, reason="Not stated.")
    first, retry = api.chat_requests()
    assert retry["messages"][: len(first["messages"])] == first["messages"]
    assert retry["messages"][-2] == {"role": "assistant", "content": '{"supported": "perhaps"}'}
    assert "supported" in retry["messages"][-1]["content"]
    assert "could not be used" in retry["messages"][-1]["content"]


def test_a_structured_reply_invalid_twice_raises_structured_output_error(api):
    api.script_chat("Sure! It is supported.", '{"reason": 3}', '{"supported": true, "reason": "unused"}')

    with pytest.raises(StructuredOutputError) as excinfo:
        get_chat_model(openai_settings(api)).with_structured_output(Verdict).invoke("Is it supported?")

    assert excinfo.value.schema_name == "Verdict"
    assert excinfo.value.raw_output == '{"reason": 3}'
    assert len(api.chat_requests()) == 2  # one retry, never a third call


def test_include_raw_reports_the_failure_instead_of_raising(api):
    api.script_chat("no json", "still no json")

    result = (
        get_chat_model(openai_settings(api))
        .with_structured_output(Verdict, include_raw=True)
        .invoke("Is it supported?")
    )

    assert result["parsed"] is None
    assert isinstance(result["parsing_error"], StructuredOutputError)
    assert result["raw"].content == "still no json"


def test_a_reply_cut_off_by_the_token_budget_is_retried_with_twice_the_budget(api):
    truncated = chat_completion_body('{"supported": true, "reason": "The pass', finish_reason="length")
    api.script_chat(
        FakeResponse(json_body=truncated), '{"supported": true, "reason": "The passage says so."}'
    )

    verdict = (
        get_chat_model(openai_settings(api, max_tokens=40))
        .with_structured_output(Verdict)
        .invoke("Supported?")
    )

    assert verdict.supported is True
    first, retry = api.chat_requests()
    assert retry["messages"] == first["messages"]  # no confusing feedback, just more room
    budget = [r.get("max_tokens") or r.get("max_completion_tokens") for r in (first, retry)]
    assert budget == [40, 80]


def test_json_mode_spells_the_schema_out_for_servers_without_json_schema(api):
    api.script_chat('```json\n{"supported": true, "reason": "Stated."}\n```')

    verdict = (
        get_chat_model(openai_settings(api, structured_output="json_mode"))
        .with_structured_output(Verdict)
        .invoke("Is it supported?")
    )

    assert verdict.supported is True
    request = api.chat_requests()[0]
    assert request["response_format"] == {"type": "json_object"}
    assert request["messages"][0]["role"] == "system"
    schema_in_prompt = request["messages"][0]["content"].split("\n\n", 1)[1]
    assert json.loads(schema_in_prompt)["properties"].keys() == {"supported", "reason"}


def test_batch_and_ainvoke_work_like_invoke(api):
    api.script_chat("one", "two", "three")
    model = get_chat_model(openai_settings(api))

    replies = model.batch(["first?", "second?"], config={"max_concurrency": 1})
    async_reply = asyncio.run(model.ainvoke("third?"))

    assert [r.content for r in replies] == ["one", "two"]
    assert async_reply.content == "three"


def test_async_failures_are_typed_too(api):
    api.script_chat(FakeOpenAIServer.server_error(503))

    with pytest.raises(ProviderUnavailable, match="HTTP 503 after 0 retries"):
        asyncio.run(get_chat_model(openai_settings(api, max_retries=0)).ainvoke("Capital of France?"))


def llama_cpp_rejection() -> FakeResponse:
    """What llama.cpp's OpenAI-compatible server answers to ``response_format: json_schema``."""
    message = "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    message += "'msg': \"Input should be 'text' or 'json_object'\"}]"
    return FakeResponse(
        status=500, json_body={"error": {"message": message}}, headers={"retry-after-ms": "10"}
    )


class NoteCollector(BaseCallbackHandler):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def on_custom_event(self, name, data, *, run_id, **kwargs):  # type: ignore[no-untyped-def]
        self.notes.append(data["note"])


def test_auto_structured_output_falls_back_to_json_mode_when_the_server_rejects_json_schema(api):
    api.script_chat(*[llama_cpp_rejection()] * 3, '{"supported": true, "reason": "Stated."}')
    model = get_chat_model(openai_settings(api))
    notes = NoteCollector()

    verdict = model.with_structured_output(Verdict).invoke("Is it supported?", {"callbacks": [notes]})

    assert verdict == Verdict(supported=True, reason="Stated.")
    formats = [r["response_format"]["type"] for r in api.chat_requests()]
    assert formats == ["json_schema"] * 3 + ["json_object"]  # the client's own 2 retries, then json_mode
    assert len(notes.notes) == 1 and "rejected response_format json_schema" in notes.notes[0]


def test_after_one_rejection_the_model_asks_for_json_mode_straight_away(api):
    api.script_chat(*[llama_cpp_rejection()] * 3, '{"supported": true, "reason": "a"}')
    model = get_chat_model(openai_settings(api))
    model.with_structured_output(Verdict).invoke("first?")
    api.script_chat('{"supported": false, "reason": "b"}')

    verdict = model.with_structured_output(Verdict).invoke("second?")

    assert verdict.reason == "b"
    assert api.chat_requests()[-1]["response_format"] == {"type": "json_object"}


def test_auto_structured_output_does_not_mistake_a_rate_limit_for_a_rejection(api):
    api.script_chat(*[FakeOpenAIServer.rate_limited()] * 3)

    with pytest.raises(ProviderUnavailable, match="rate limit"):
        get_chat_model(openai_settings(api)).with_structured_output(Verdict).invoke("Is it supported?")

    assert [r["response_format"]["type"] for r in api.chat_requests()] == ["json_schema"] * 3


def test_json_schema_setting_never_falls_back(api):
    api.script_chat(*[llama_cpp_rejection()] * 3)

    with pytest.raises(ProviderUnavailable, match="HTTP 500"):
        get_chat_model(openai_settings(api, structured_output="json_schema")).with_structured_output(
            Verdict
        ).invoke("Is it supported?")

    assert len(api.chat_requests()) == 3
