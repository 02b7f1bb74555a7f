"""get_chat_model picks the provider by settings; 'auto' means OpenAI only when it is configured."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.settings import load_settings
from tests.fakes.openai_server import FakeOpenAIServer
from tools.providers.chat_factory import get_chat_model, resolve_llm_provider
from tools.providers.chat_local import LocalLlamaChatModel
from tools.providers.chat_openai import RagpilotChatOpenAI


def test_auto_uses_the_local_model_when_no_openai_key_or_endpoint_is_set():
    assert resolve_llm_provider(load_settings()) == "local"


def test_auto_uses_openai_when_the_key_is_set():
    assert resolve_llm_provider(load_settings(openai_api_key="sk-test")) == "openai"


def test_auto_uses_openai_when_an_llm_endpoint_is_set():
    assert resolve_llm_provider(load_settings(llm={"base_url": "http://127.0.0.1:9/v1"})) == "openai"


def test_an_explicit_local_provider_wins_over_a_configured_key():
    assert resolve_llm_provider(load_settings(openai_api_key="sk-test", llm={"provider": "local"})) == "local"


def test_openai_without_key_or_endpoint_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_chat_model(load_settings(llm={"provider": "openai"}))


def test_a_keyless_compatible_server_is_reachable_through_llm_base_url():
    with FakeOpenAIServer() as api:
        api.script_chat("pong")
        model = get_chat_model(load_settings(llm={"base_url": api.base_url}))

        assert isinstance(model, RagpilotChatOpenAI)
        assert model.invoke("ping").content == "pong"


def test_the_local_model_is_built_once_per_configuration_without_loading_weights():
    settings = load_settings(llm={"provider": "local", "max_tokens": 77})

    first, second = get_chat_model(settings), get_chat_model(settings)
    other = get_chat_model(load_settings(llm={"provider": "local", "max_tokens": 78}))

    assert isinstance(first, LocalLlamaChatModel)
    assert first is second and other is not first
    assert first.max_tokens == 77 and first.model_path.is_file()
