"""Choose the chat model by settings: the bundled local LLM, or OpenAI / any OpenAI-compatible endpoint.

Whichever it is, the graph sees a LangChain ``BaseChatModel`` with the same behaviour: ``invoke``,
``stream``, usage metadata, ``with_structured_output(Schema)`` returning a validated instance or raising
``StructuredOutputError``, and ``ProviderUnavailable`` when the provider fails.
"""

from __future__ import annotations

import threading
from typing import Literal

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from core.errors import ConfigError
from core.settings import Settings

_CACHE: dict[tuple[object, ...], BaseChatModel] = {}
_CACHE_LOCK = threading.Lock()


def resolve_llm_provider(settings: Settings) -> Literal["local", "openai"]:
    """``llm.provider`` with ``auto`` resolved: OpenAI when OPENAI_API_KEY or ``llm.base_url`` is set."""
    if settings.llm.provider != "auto":
        return settings.llm.provider
    return "openai" if settings.openai_api_key or settings.llm.base_url else "local"


def get_chat_model(settings: Settings) -> BaseChatModel:
    """The configured chat model, built once per process per configuration.

    Raises ConfigError naming OPENAI_API_KEY when OpenAI is chosen without a key or endpoint, and
    ModelAssetError when the local model's part packages are missing.
    """
    provider = resolve_llm_provider(settings)
    key = _cache_key(settings, provider)
    with _CACHE_LOCK:
        model = _CACHE.get(key)
        if model is None:
            model = _build_local(settings) if provider == "local" else _build_openai(settings)
            _CACHE[key] = model
    return model


def _cache_key(settings: Settings, provider: str) -> tuple[object, ...]:
    llm = settings.llm
    common = (provider, llm.temperature, llm.max_tokens)
    if provider == "local":
        return (
            *common, str(settings.model_cache_dir.resolve()), llm.context_tokens, llm.num_threads,
            llm.prompt_cache_mb, llm.weight_repacking,
        )  # fmt: skip
    return (
        *common,
        llm.model,
        llm.base_url or settings.openai_base_url,
        settings.openai_api_key,
        llm.timeout_s,
        llm.max_retries,
        llm.structured_output,
    )


def _build_local(settings: Settings) -> BaseChatModel:
    from tools.providers.chat_local import LocalLlamaChatModel

    return LocalLlamaChatModel.from_settings(settings)


def _build_openai(settings: Settings) -> BaseChatModel:
    from tools.providers.chat_openai import RagpilotChatOpenAI

    base_url = settings.llm.base_url or settings.openai_base_url
    api_key = settings.openai_api_key
    if not api_key:
        if not base_url:
            raise ConfigError(
                "llm.provider=openai needs OPENAI_API_KEY (or llm.base_url for an OpenAI-compatible "
                "server that needs no key)"
            )
        api_key = "unused"  # the client insists on a key; keyless local servers ignore it
    return RagpilotChatOpenAI(
        model=settings.llm.model,
        api_key=SecretStr(api_key),
        base_url=base_url,
        temperature=settings.llm.temperature,
        max_completion_tokens=settings.llm.max_tokens,  # the field's alias; sent as max_tokens
        timeout=settings.llm.timeout_s,
        max_retries=settings.llm.max_retries,
        stream_usage=True,
        structured_output_method=settings.llm.structured_output,
    )
