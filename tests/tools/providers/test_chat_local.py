"""The bundled local LLM as a LangChain chat model (real llama.cpp, real Qwen2.5-Coder-1.5B-Instruct weights).

Each LLM call costs seconds on a 2-core machine, so the calls are few, short and shared: one batch of
two invokes, one stream, two structured calls and one over-long prompt.
"""

from __future__ import annotations

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from core.errors import ProviderUnavailable, StructuredOutputError
from core.settings import load_settings
from tools.providers.chat_local import LocalLlamaChatModel

pytestmark = pytest.mark.llm

TWO_CAPITALS = [
    SystemMessage("You are a concise assistant."),
    HumanMessage("In one short sentence, name the capitals of France and Italy."),
]


class CityFacts(BaseModel):
    city: str
    country: str
    is_capital: bool = Field(description="whether the city is its country's capital")


@pytest.fixture(scope="module")
def local_chat() -> LocalLlamaChatModel:
    # With the prompt-state cache (the default): tests that compare two replies to one prompt also check
    # that a prompt resumed from the cache gets the reply it gets evaluated whole (llama_resume).
    return LocalLlamaChatModel.from_settings(load_settings(llm={"max_tokens": 40}))


@pytest.fixture(scope="module")
def batch_replies(local_chat):
    """One batch of two invokes, shared by the tests that read them."""
    return local_chat.batch(["What is the capital of France? Answer with one word.", TWO_CAPITALS])


def test_invoke_answers_a_trivial_question(batch_replies):
    one_word, _ = batch_replies

    assert "paris" in one_word.content.lower()
    assert len(one_word.content.split()) <= 3


def test_replies_carry_token_usage_and_finish_reason(batch_replies):
    one_word, _ = batch_replies

    usage = one_word.usage_metadata
    assert usage["input_tokens"] > 10  # the chat template wraps the question
    assert 1 <= usage["output_tokens"] <= 40
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert one_word.response_metadata["finish_reason"] == "stop"


def test_stream_yields_tokens_that_add_up_to_the_invoked_reply(local_chat, batch_replies):
    _, invoked = batch_replies
    tokens: list[str] = []

    class TokenRecorder(BaseCallbackHandler):
        def on_llm_new_token(self, token: str, **kwargs: object) -> None:
            tokens.append(token)

    # llama.cpp keeps the last prompt's KV state: if the batch's last call was this very prompt, only
    # its final token would be evaluated again, by other kernels than a whole prompt (unrepacked
    # weights), and the greedy reply can change. Evaluate it whole, as the invoke did.
    local_chat.loaded().llama.reset()
    chunks = list(local_chat.stream(TWO_CAPITALS, config={"callbacks": [TokenRecorder()]}))

    text = [c.content for c in chunks if c.content]
    assert len(text) >= 5
    assert "".join(text) == invoked.content
    assert [t for t in tokens if t] == text  # the closing usage chunk reports an empty token
    assert "Paris" in invoked.content and "Rome" in invoked.content
    # The closing chunk carries the usage, counted the same way as a plain invoke.
    assert chunks[-1].usage_metadata["input_tokens"] == invoked.usage_metadata["input_tokens"]
    assert chunks[-1].usage_metadata["output_tokens"] == invoked.usage_metadata["output_tokens"]


def test_logprobs_report_the_first_tokens_alternatives_best_first_with_the_sampled_one_on_top(local_chat):
    reply = local_chat.bind(logprobs=True, top_logprobs=5, max_tokens=1).invoke(
        "Is Paris the capital of France? Reply with one word: yes or no."
    )

    alternatives = reply.response_metadata["first_token_logprobs"]
    assert len(alternatives) == 5
    logprobs = [a["logprob"] for a in alternatives]
    assert logprobs == sorted(logprobs, reverse=True) and all(lp <= 0 for lp in logprobs)
    assert alternatives[0]["token"] == reply.content  # greedy: the sampled token is the most likely one
    assert reply.content.strip().lower() == "yes"
    assert "first_token_logprobs" not in local_chat.invoke("Say hi.").response_metadata  # only when asked


REFUSE = [SystemMessage("You are a test."), HumanMessage("Reply with exactly NOT_FOUND and nothing else.")]


def test_a_likely_opening_is_kept_and_its_probability_reported(local_chat):
    reply = local_chat.bind(unlikely_opening={"words": ["NOT_FOUND"], "below": 0.5}).invoke(REFUSE)

    report = reply.response_metadata["unlikely_opening"]
    assert reply.content.startswith("NOT_FOUND")
    assert report["masked"] is False and 0.5 <= report["probability"] <= 1.0


def test_an_opening_below_the_bound_is_masked_in_invoke_and_stream_alike(local_chat):
    # Bound 1.0: even the instructed reply is not certain enough, so the next most likely opening wins.
    masking = local_chat.bind(unlikely_opening={"words": ["NOT_FOUND"], "below": 1.0})
    invoked = masking.invoke(REFUSE)
    streamed = list(masking.stream(REFUSE))

    assert invoked.response_metadata["unlikely_opening"]["masked"] is True
    assert not invoked.content.lstrip().startswith("NOT")
    assert "".join(chunk.content for chunk in streamed) == invoked.content
    assert streamed[-1].response_metadata["unlikely_opening"] == invoked.response_metadata["unlikely_opening"]


def test_an_opening_that_is_not_the_greedy_choice_is_left_alone(local_chat):
    masking = local_chat.bind(unlikely_opening={"words": ["NOT_FOUND"], "below": 1.0}, max_tokens=5)
    reply = masking.invoke([SystemMessage("You are a test."), HumanMessage("Reply with exactly: hello")])

    assert reply.response_metadata["unlikely_opening"]["masked"] is False
    assert reply.content.strip().lower().startswith("hello")


def test_the_masked_opening_tokens_are_case_sensitive_prefixes(local_chat):
    # "No" opens an answer to a yes/no question; only the upper-case refusal word is masked.
    from tools.providers.chat_local import _opening_token_ids

    llama = local_chat.loaded().llama
    ids = _opening_token_ids(llama, ("NOT_FOUND",))
    texts = {llama.detokenize([i]).decode("utf-8").strip() for i in ids}

    assert "NOT" in texts and all("NOT_FOUND".startswith(t) and len(t) >= 2 for t in texts)
    assert not {"No", "no", "N"} & texts


def test_structured_output_returns_a_valid_pydantic_instance(local_chat):
    facts = local_chat.with_structured_output(CityFacts).invoke(
        "Paris: give the city, its country, and whether it is the capital."
    )

    assert isinstance(facts, CityFacts)
    assert "paris" in facts.city.lower()
    assert "france" in facts.country.lower()
    assert facts.is_capital is True


def test_structured_output_cut_off_twice_raises_structured_output_error():
    # 16 tokens, then 32 on the retry, cannot hold a long essay: both replies end mid-JSON.
    class Essay(BaseModel):
        title: str
        text: str

    tiny = LocalLlamaChatModel.from_settings(load_settings(llm={"max_tokens": 16}))

    with pytest.raises(StructuredOutputError) as excinfo:
        tiny.with_structured_output(Essay).invoke("Write a 300-word essay on the history of Rome.")

    assert excinfo.value.schema_name == "Essay"
    assert excinfo.value.raw_output.startswith("{")


def test_a_prompt_longer_than_the_context_raises_provider_unavailable_naming_the_setting():
    small = LocalLlamaChatModel.from_settings(load_settings(llm={"context_tokens": 512}))

    with pytest.raises(ProviderUnavailable, match="llm.context_tokens"):
        small.invoke("word " * 800)


RULES = SystemMessage(
    "You answer questions about the Northwind employee handbook. "
    + " ".join(f"Rule {i}: keep answers short, factual and polite." for i in range(1, 16))
)


def test_a_prompt_starting_like_an_earlier_one_skips_that_prefix_with_the_same_reply():
    settings = load_settings(llm={"max_tokens": 24, "prompt_cache_mb": 256})
    cached = LocalLlamaChatModel.from_settings(settings)
    uncached = LocalLlamaChatModel.from_settings(load_settings(llm={"max_tokens": 24, "prompt_cache_mb": 0}))
    question = HumanMessage("How many days of leave? Reply in five words.")

    cached.invoke([RULES, HumanMessage("Say hello.")])
    cached.invoke([SystemMessage("You translate to French."), HumanMessage("Good morning")])  # another prefix
    reply = cached.invoke([RULES, question])  # starts like the first call, not like the last one

    cache_read = reply.usage_metadata.get("input_token_details", {}).get("cache_read", 0)
    assert cache_read > 150  # the rules were not evaluated again
    assert cache_read < reply.usage_metadata["input_tokens"]  # the new question was
    assert reply.content == uncached.invoke([RULES, question]).content

    # The cache stays within its budget, counting all a state holds (llama-cpp-python's own cache counts
    # only the KV bytes while each state also copies ~300 MB of prompt logits).
    cache = cached.loaded().llama.cache
    assert len(cache.cache_state) == 3
    assert all(state.scores.shape[0] == 1 for state in cache.cache_state.values())
    assert cache.cache_size <= 256 << 20
