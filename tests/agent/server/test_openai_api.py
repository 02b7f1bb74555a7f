"""The OpenAI-compatible endpoint driven by the real ``openai`` Python SDK over real HTTP: model discovery,
answers with citations (text markers and the ``ragpilot`` extension), streaming, follow-ups from the
client's own history or a server thread, identity and errors in OpenAI's shape."""

from __future__ import annotations

import re

import httpx
import openai
import pytest

from tests.agent.server.conftest import KEY_A, KEY_B, RunningApi

FALCON_SPEED = "How fast does Project Falcon answer routing requests?"


def client_for(api: RunningApi, key: str, **options: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{api.base_url}/v1", api_key=key, max_retries=0, timeout=900, **options)


# --- discovery, identity, errors (no model calls) ---------------------------------------------------


def test_models_lists_one_model_per_route_policy(api: RunningApi) -> None:
    models = client_for(api, KEY_A).models.list()

    assert [m.id for m in models] == ["ragpilot", "ragpilot-direct", "ragpilot-single", "ragpilot-iterative"]
    assert client_for(api, KEY_A).models.retrieve("ragpilot-single").id == "ragpilot-single"


def test_a_bad_key_is_an_authentication_error_in_openais_shape(api: RunningApi) -> None:
    with pytest.raises(openai.AuthenticationError) as excinfo:
        client_for(api, "not-a-key").chat.completions.create(
            model="ragpilot", messages=[{"role": "user", "content": FALCON_SPEED}]
        )

    assert excinfo.value.status_code == 401
    assert excinfo.value.body == {
        "message": "unknown API key",
        "type": "authentication_error",
        "param": None,
        "code": "invalid_api_key",
    }


def test_an_unknown_model_is_not_found_and_names_the_models_offered(api: RunningApi) -> None:
    with pytest.raises(openai.NotFoundError) as excinfo:
        client_for(api, KEY_A).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": FALCON_SPEED}]
        )

    body = excinfo.value.body
    assert isinstance(body, dict) and body["code"] == "model_not_found" and body["param"] == "model"
    assert "ragpilot-iterative" in body["message"]
    with pytest.raises(openai.NotFoundError):
        client_for(api, KEY_A).models.retrieve("gpt-4o")


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [{"role": "assistant", "content": "Hello!"}],
        [{"role": "user", "content": "   "}],
        [{"role": "wizard", "content": "Falcon?"}],
    ],
)
def test_a_conversation_without_a_question_last_is_a_bad_request(api: RunningApi, messages: list) -> None:
    with pytest.raises(openai.BadRequestError) as excinfo:
        client_for(api, KEY_A).chat.completions.create(model="ragpilot", messages=messages)

    body = excinfo.value.body
    assert isinstance(body, dict) and body["type"] == "invalid_request_error" and body["message"]


def test_other_paths_keep_their_own_error_shape(api: RunningApi) -> None:
    with httpx.Client(base_url=api.base_url, headers={"X-API-Key": "nope"}) as plain:
        response = plain.post("/ask", json={"question": FALCON_SPEED})
    assert response.status_code == 401 and response.json() == {"detail": "unknown API key"}


# --- answers (local LLM) -------------------------------------------------------------------------------


@pytest.mark.llm
def test_an_answer_cites_in_its_text_and_in_the_extension_field(api: RunningApi) -> None:
    completion = client_for(api, KEY_A).chat.completions.create(
        model="ragpilot-single",
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},  # not read: ragpilot has its own
            {"role": "user", "content": FALCON_SPEED},
        ],
    )

    text = completion.choices[0].message.content or ""
    assert re.search(r"(?<![\d.])40(?![\d.])", text) and re.search(r"\[1\]", text)
    assert "Sources:" in text and "falcon.md" in text  # what a plain chat UI shows
    assert completion.choices[0].finish_reason == "stop" and completion.model == "ragpilot-single"
    extension = (completion.model_extra or {})["ragpilot"]  # what a program reads
    assert extension["route"] == "single" and not extension["refused"]
    assert any(c["source"].endswith("falcon.md") for c in extension["citations"])
    assert completion.usage is not None and completion.usage.completion_tokens > 0


@pytest.mark.llm
def test_a_stream_ends_with_the_finish_reason_the_extension_and_usage(api: RunningApi) -> None:
    stream = client_for(api, KEY_A).chat.completions.create(
        model="ragpilot-single",
        messages=[{"role": "user", "content": "What is Project Falcon?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)  # the SDK stops at [DONE]

    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "falcon" in text.lower() and "Sources:" in text
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1
    finished = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finished) == 1 and finished[0].choices[0].finish_reason == "stop"
    assert (finished[0].model_extra or {})["ragpilot"]["citations"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None


@pytest.mark.llm
def test_a_follow_up_is_read_against_the_history_the_client_sends(api: RunningApi) -> None:
    client = client_for(api, KEY_A)
    first = client.chat.completions.create(
        model="ragpilot-single", messages=[{"role": "user", "content": FALCON_SPEED}]
    )
    reply = first.choices[0].message.content or ""

    second = client.chat.completions.create(
        model="ragpilot-single",
        messages=[
            {"role": "user", "content": FALCON_SPEED},
            {"role": "assistant", "content": reply},  # sources list and all, as a chat UI sends it back
            {"role": "user", "content": "Which team does it belong to?"},
        ],
    )

    extension = (second.model_extra or {})["ragpilot"]
    assert "falcon" in extension["standalone_question"].lower()  # "it" was read from the history
    assert "logistics" in (second.choices[0].message.content or "").lower()
    assert extension["thread_id"] is None  # nothing was stored on the server


@pytest.mark.llm
def test_a_server_thread_keeps_the_history_and_belongs_to_its_key(api: RunningApi) -> None:
    client = client_for(api, KEY_A)
    for question in (FALCON_SPEED, "Which team does it belong to?"):
        completion = client.chat.completions.create(
            model="ragpilot-single",
            messages=[{"role": "user", "content": question}],  # only the new message: the thread has the rest
            extra_body={"thread_id": "openai-thread"},
        )
    assert (completion.model_extra or {})["ragpilot"]["thread_id"] == "openai-thread"
    assert "logistics" in (completion.choices[0].message.content or "").lower()

    with httpx.Client(base_url=api.base_url, headers={"X-API-Key": KEY_A}) as plain:
        turns = plain.get("/threads/openai-thread").json()["turns"]
    assert [t["question"] for t in turns] == [FALCON_SPEED, "Which team does it belong to?"]
    with httpx.Client(base_url=api.base_url, headers={"X-API-Key": KEY_B}) as other:
        assert other.get("/threads/openai-thread").status_code == 404


@pytest.mark.llm
def test_bearer_keys_read_with_their_own_groups_only(api: RunningApi) -> None:
    completion = client_for(api, KEY_A).chat.completions.create(
        model="ragpilot-single",
        messages=[{"role": "user", "content": "What is the budget of Project Heron?"}],
    )

    extension = (completion.model_extra or {})["ragpilot"]
    assert "3 million" not in (completion.choices[0].message.content or "")
    assert not any(c["source"].endswith("heron.md") for c in extension["citations"])


@pytest.mark.llm
def test_a_client_that_leaves_mid_stream_frees_the_server(api: RunningApi) -> None:
    stream = client_for(api, KEY_A).chat.completions.create(
        model="ragpilot-single",
        messages=[{"role": "user", "content": "What is Project Falcon?"}],
        stream=True,
    )
    first = next(iter(stream))  # the role chunk: the run is under way
    assert first.choices[0].delta.role == "assistant"
    stream.close()  # hang up

    after = client_for(api, KEY_B).chat.completions.create(
        model="ragpilot-single",
        messages=[{"role": "user", "content": "What is the budget of Project Heron?"}],
    )
    assert "3 million" in (after.choices[0].message.content or "")
