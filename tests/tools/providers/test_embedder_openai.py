"""OpenAI-compatible embeddings over real HTTP (fake server on 127.0.0.1), and the embedder factory."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from core.errors import ConfigError, ProviderUnavailable
from core.settings import Settings, load_settings
from tests.fakes.http_server import FakeResponse
from tests.fakes.openai_server import FakeOpenAIServer, hashed_vector
from tools.providers.embedder_factory import get_embedder
from tools.providers.embedder_onnx_e5 import OnnxE5Embedder
from tools.providers.embedder_openai import OpenAIEmbedder, estimate_tokens


@pytest.fixture
def api() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(embedding_dim=8) as server:
        yield server


def embedder_settings(api: FakeOpenAIServer, **embedder: object) -> Settings:
    config = {
        "provider": "openai",
        "model": "e5-served",
        "dim": 8,
        "base_url": api.base_url,
        "max_retries": 1,
    }
    return load_settings(openai_api_key="test-key", embedder={**config, **embedder})


def expected(text: str, dim: int = 8) -> np.ndarray:
    vector = np.asarray(hashed_vector(text, dim), np.float32)
    return vector / np.linalg.norm(vector)


def test_passages_come_back_l2_normalised_in_input_order(api):
    embedder = get_embedder(embedder_settings(api))
    texts = ["alpha", "beta", "alpha", "中文段落"]

    vectors = embedder.embed_passages(texts)

    assert vectors.shape == (4, 8) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    for row, text in zip(vectors, texts, strict=True):
        np.testing.assert_allclose(row, expected(text), rtol=1e-5)
    assert embedder.name == "openai/e5-served/8"


def test_a_query_is_one_vector_and_many_queries_are_one_request(api):
    embedder = get_embedder(embedder_settings(api))

    query = embedder.embed_query("what is alpha?")
    queries = embedder.embed_queries(["q1", "q2", "q3"])

    np.testing.assert_allclose(query, expected("what is alpha?"), rtol=1e-5)
    assert queries.shape == (3, 8)
    assert [len(r["input"]) for r in api.embedding_requests()] == [1, 3]


def test_large_inputs_are_split_into_bounded_requests(api):
    texts = [f"passage {i}" for i in range(300)]

    vectors = get_embedder(embedder_settings(api)).embed_passages(texts)

    assert [len(r["input"]) for r in api.embedding_requests()] == [256, 44]
    np.testing.assert_allclose(vectors[299], expected("passage 299"), rtol=1e-5)


def test_empty_text_is_sent_as_a_space_instead_of_failing_the_batch(api):
    get_embedder(embedder_settings(api)).embed_passages(["", "text"])

    assert api.embedding_requests()[0]["input"] == [" ", "text"]


def test_text_embedding_3_models_are_asked_for_the_configured_size(api):
    embedder = get_embedder(embedder_settings(api, model="text-embedding-3-small", dim=8))

    embedder.embed_query("x")

    assert api.embedding_requests()[0]["dimensions"] == 8
    assert embedder.name == "openai/text-embedding-3-small/8"


def test_a_known_model_needs_no_dim_but_an_unknown_one_does(api):
    assert get_embedder(embedder_settings(api, model="text-embedding-3-large", dim=None)).dim == 3072
    with pytest.raises(ConfigError, match="embedder.dim"):
        get_embedder(embedder_settings(api, model="my-own-model", dim=None))


def test_vectors_of_the_wrong_size_raise_provider_unavailable_naming_the_setting(api):
    embedder = get_embedder(embedder_settings(api, dim=16))  # the server returns 8

    with pytest.raises(ProviderUnavailable, match="embedder.dim"):
        embedder.embed_passages(["a"])


def test_server_errors_after_retries_raise_provider_unavailable(api):
    api.script_embeddings(FakeOpenAIServer.server_error(502), FakeOpenAIServer.server_error(502))

    with pytest.raises(ProviderUnavailable, match="HTTP 502 after 1 retries"):
        get_embedder(embedder_settings(api)).embed_passages(["a"])
    assert len(api.embedding_requests()) == 2


def test_a_malformed_body_raises_provider_unavailable(api):
    api.script_embeddings(FakeResponse(raw_body=b'{"data": [{"embedding": [0.1,'))

    with pytest.raises(ProviderUnavailable, match="OpenAI embeddings 'e5-served'"):
        get_embedder(embedder_settings(api, max_retries=0)).embed_passages(["a"])


def test_a_slow_server_times_out_with_the_setting_named(api):
    api.script_embeddings(FakeResponse(json_body={}, delay_s=2.0))

    with pytest.raises(ProviderUnavailable, match=r"embedder.timeout_s"):
        get_embedder(embedder_settings(api, timeout_s=0.3, max_retries=0)).embed_passages(["a"])


def test_openai_embeddings_without_key_or_endpoint_are_a_config_error():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_embedder(load_settings(embedder={"provider": "openai", "model": "text-embedding-3-small"}))


def test_token_estimate_counts_words_and_cjk_characters():
    assert estimate_tokens("hello world") == 2
    assert estimate_tokens("你好世界") == 4
    # 20 letters: one token plus two more pieces; then ",", "again" and "." count one each
    assert estimate_tokens("internationalization, again.") == 6
    assert estimate_tokens("") == 0


def test_compatible_servers_use_the_estimate_not_tiktoken(api):
    embedder = get_embedder(embedder_settings(api))

    assert embedder.count_tokens("retrieval augmented generation 检索") == estimate_tokens(
        "retrieval augmented generation 检索"
    )


def test_the_factory_caches_per_configuration():
    local_a = get_embedder(load_settings())
    local_b = get_embedder(load_settings())

    assert isinstance(local_a, OnnxE5Embedder) and local_a is local_b


def test_the_openai_embedder_is_cached_per_model(api):
    first = get_embedder(embedder_settings(api))
    again = get_embedder(embedder_settings(api))
    other = get_embedder(embedder_settings(api, model="another", dim=8))

    assert isinstance(first, OpenAIEmbedder) and first is again and other is not first
