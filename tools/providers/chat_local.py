"""The offline chat model: the bundled Qwen2.5-Coder-1.5B-Instruct GGUF run by llama.cpp, as a LangChain chat model.

The graph talks to it exactly as to ChatOpenAI: ``invoke``/``stream``/``batch``, callbacks (a streaming
callback receives every token), usage metadata on the reply, and ``with_structured_output(Schema)``
returning a validated pydantic instance (llama.cpp constrains the reply with a grammar compiled from the
JSON schema).

``bind(logprobs=True, top_logprobs=k)`` reports the first reply token's k most likely alternatives
(``response_metadata["first_token_logprobs"]``: token text and log-probability, read before any grammar or
penalty), so a one-word yes/no reply can be read as a probability (the answer gate, ``check_answerable``).
``bind(unlikely_opening={"words": ["NOT_FOUND"], "below": 0.5})`` masks a reply's opening words at its
first token unless they carry that much probability (the generator's refusal, ``generate_answer``).

The weights load once per process per (path, context size, threads, prompt cache); a llama.cpp context
is not thread-safe, so calls on one loaded model are serialised by its lock.

Prompt cache: every graph step has its own system prompt, so consecutive calls (answer, then support
check, then the next question's answer) share no prefix with the call just before. llama.cpp keeps only
the last prompt's state; a ``LlamaRAMCache`` keeps earlier ones, and a prompt that starts like one of
them resumes from its state instead of evaluating the system prompt again (answer + check for three
questions: 62% fewer prompt tokens evaluated). A prompt is resumed only where the result equals
evaluating it whole (``llama_resume``: llama.cpp computes batches of fewer than 8 tokens with other
kernels), so a reply does not depend on the calls before it or on the cache. The reply's usage
reports the reused tokens as ``input_token_details.cache_read``, as ChatOpenAI does for OpenAI's
prompt caching.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, convert_to_openai_messages
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from core.errors import ProviderUnavailable
from core.settings import Settings
from tools.providers.llama_cpu import PROVIDER_LABEL, WeightRepacking, open_llama
from tools.providers.llama_resume import ExactResume
from tools.providers.local_gguf import GGUF_FILENAME, ensure_local_gguf
from tools.providers.native_probe import safe_weight_repacking
from tools.providers.structured_output import OutputSchema, structured_output_runnable

# Sampling options a caller may override per call, e.g. ``model.bind(max_tokens=64)``.
_PER_CALL_OPTIONS = (
    "temperature",
    "max_tokens",
    "top_p",
    "top_k",
    "seed",
    "repeat_penalty",
    "response_format",
)

# How many of the first reply token's most likely alternatives ``top_logprobs`` may ask for (OpenAI's cap).
MAX_TOP_LOGPROBS = 20


@dataclass
class _LoadedLlama:
    llama: Any  # llama_cpp.Llama; typed loosely so importing this module does not load llama.cpp
    lock: threading.Lock = field(default_factory=threading.Lock)
    load_seconds: float = 0.0
    use_extra_buffers: bool = True
    repacking_reason: str = ""


_LOADED: dict[tuple[str, int, int, int, str], _LoadedLlama] = {}
_LOADING_LOCK = threading.Lock()


def load_llama(
    model_path: Path,
    context_tokens: int,
    num_threads: int,
    prompt_cache_mb: int = 0,
    weight_repacking: WeightRepacking = "auto",
) -> _LoadedLlama:
    """Return the process-wide llama.cpp model for these options, loading it once.

    The first load on a machine is tried in a child process first (``native_probe``): a llama.cpp crash
    there becomes a ProviderUnavailable naming the cause, and a layout that crashes is not used.
    """
    key = (str(Path(model_path).resolve()), context_tokens, num_threads, prompt_cache_mb, weight_repacking)
    with _LOADING_LOCK:
        loaded = _LOADED.get(key)
        if loaded is None:
            import time

            started = time.perf_counter()
            verdict = safe_weight_repacking(Path(key[0]), weight_repacking, num_threads)
            llama = open_llama(Path(key[0]), context_tokens, num_threads, verdict.use_extra_buffers)
            if prompt_cache_mb:
                llama.set_cache(_prompt_state_cache(prompt_cache_mb << 20))
            ExactResume(llama)
            loaded = _LoadedLlama(
                llama,
                load_seconds=time.perf_counter() - started,
                use_extra_buffers=verdict.use_extra_buffers,
                repacking_reason=verdict.reason,
            )
            _LOADED[key] = loaded
    return loaded


def _prompt_state_cache(capacity_bytes: int) -> Any:
    """A ``LlamaRAMCache`` whose states keep only their KV cache, and whose capacity counts all they hold.

    llama-cpp-python's saved state also copies the logits of every prompt token (up to n_batch rows of
    the 152k-word vocabulary: ~300 MB) while its cache counts only the KV bytes, so a 1 GB cache grew past
    20 GB in a benchmark. A restored state is always re-evaluated from its last token before sampling
    (``load_state`` sets ``_requires_eval``), so those logits are never read: one zero row stands in for
    them (numpy broadcasts it on restore).
    """
    import numpy as np
    from llama_cpp import LlamaRAMCache

    class PromptStateCache(LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(s.llama_state_size + s.scores.nbytes for s in self.cache_state.values())

        def __setitem__(self, key: Sequence[int], value: Any) -> None:
            value.scores = np.zeros((1, value.scores.shape[1]), dtype=np.single)
            super().__setitem__(key, value)

    return PromptStateCache(capacity_bytes=capacity_bytes)


class _TokenCounter:
    """A llama.cpp logits processor that only counts: prompt length and sampled tokens of a stream."""

    def __init__(self) -> None:
        self.prompt_tokens = 0
        self.sampling_steps = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.sampling_steps == 0:
            self.prompt_tokens = len(input_ids)
        self.sampling_steps += 1
        return scores


class _FirstTokenLogprobs:
    """A llama.cpp logits processor that keeps the log-probabilities of the first reply token's ``top``
    most likely alternatives (before any grammar or penalty), as ``[{"token": text, "logprob": x}]``.

    A yes/no decision the model states in its first token (an answer, or ``NOT_FOUND``) can then be
    read as a probability and thresholded, at no extra call (issue 11, item 3).
    """

    def __init__(self, llama: Any, top: int) -> None:
        self.llama = llama
        self.top = top
        self.alternatives: list[dict[str, Any]] | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.alternatives is None:
            import numpy as np

            logits = np.asarray(scores, dtype=np.float64)
            shifted = logits - logits.max()
            log_probabilities = shifted - np.log(np.exp(shifted).sum())
            best = np.argpartition(-log_probabilities, self.top)[: self.top]
            best = best[np.argsort(-log_probabilities[best])]
            self.alternatives = [
                {
                    "token": self.llama.detokenize([int(i)]).decode("utf-8", errors="replace"),
                    "logprob": float(log_probabilities[i]),
                }
                for i in best
            ]
        return scores

    def metadata(self) -> dict[str, Any]:
        return {"first_token_logprobs": self.alternatives or []}


class _UnlikelyOpeningMask:
    """A llama.cpp logits processor for ``bind(unlikely_opening={"words": [...], "below": p})``: at the
    first reply token, when the most likely token opens one of ``words`` but the tokens that do carry
    less than ``p`` of the probability together, they are masked, so the reply is the most likely one
    that opens otherwise.

    Why: a fixed reply such as ``NOT_FOUND`` is one token, while an answer spreads its probability over
    many first tokens (a name, a number, "The", "Up to"). Greedy decoding then picks the fixed reply
    although the model gives answering more probability in all. Reported as
    ``response_metadata["unlikely_opening"]``: ``{"probability": p, "masked": bool}``.
    """

    def __init__(self, token_ids: list[int], below: float) -> None:
        self.token_ids = token_ids
        self.below = below
        self.report: dict[str, Any] | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.report is not None:
            return scores
        import numpy as np

        logits = np.asarray(scores, dtype=np.float64)
        shifted = logits - logits.max()
        probabilities = np.exp(shifted) / np.exp(shifted).sum()
        probability = float(probabilities[self.token_ids].sum()) if self.token_ids else 0.0
        # Only when the opening is the greedy choice: otherwise the mask changes nothing worth reporting.
        masked = int(np.argmax(logits)) in self.token_ids and probability < self.below
        self.report = {"probability": round(probability, 4), "masked": masked}
        if masked:
            scores[self.token_ids] = -np.inf
        return scores

    def metadata(self) -> dict[str, Any]:
        return {"unlikely_opening": self.report or {}}


@functools.lru_cache(maxsize=16)
def _opening_token_ids(llama: Any, words: tuple[str, ...]) -> list[int]:
    """The vocabulary entries that open one of ``words``: each prefix of two or more characters, with
    and without a leading space, that is a single token ("NOT", " NOT", "NOT_"); case-sensitive, so
    that "No" of an answer is not taken for "NOT_FOUND"."""
    ids: set[int] = set()
    for word in words:
        for end in range(2, len(word) + 1):
            for text in (word[:end], " " + word[:end]):
                tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
                if len(tokens) == 1:
                    ids.add(int(tokens[0]))
    return sorted(ids)


def _as_llama_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    converted = convert_to_openai_messages(list(messages))
    result = []
    for message in converted:
        content = message.get("content")
        if isinstance(content, list):
            parts = [part for part in content if not (isinstance(part, dict) and part.get("type") == "text")]
            if parts:
                raise ProviderUnavailable(PROVIDER_LABEL, "only text message content is supported")
            message = {**message, "content": "".join(part["text"] for part in content)}
        result.append(message)
    return result


def _prompt_tokens_evaluated(llama: Any) -> int | None:
    """llama.cpp's running count of prompt tokens it evaluated (None if this build does not report it)."""
    try:
        import llama_cpp

        return int(llama_cpp.llama_perf_context(llama.ctx).n_p_eval)
    except (AttributeError, TypeError, ValueError):
        return None


def _usage(
    prompt_tokens: int, completion_tokens: int, evaluated_before: int | None, evaluated_after: int | None
) -> UsageMetadata:
    """Token usage; the prompt tokens llama.cpp did not evaluate (a cached prefix) are ``cache_read``."""
    usage = UsageMetadata(
        input_tokens=prompt_tokens,
        output_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
    )
    if evaluated_before is not None and evaluated_after is not None and evaluated_after >= evaluated_before:
        cached = prompt_tokens - (evaluated_after - evaluated_before)
        if cached > 0:
            usage["input_token_details"] = {"cache_read": min(cached, prompt_tokens)}
    return usage


class LocalLlamaChatModel(BaseChatModel):
    """LangChain chat model over a local GGUF file run by llama-cpp-python."""

    model_path: Path
    model_name: str = GGUF_FILENAME.removesuffix(".gguf")
    context_tokens: int = 4096
    num_threads: int = 2
    prompt_cache_mb: int = 0
    weight_repacking: WeightRepacking = "auto"
    temperature: float = 0.0
    max_tokens: int = 512
    #: route ``invoke`` through the token stream so callbacks get ``on_llm_new_token`` (as in ChatOpenAI)
    streaming: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalLlamaChatModel:
        """Assemble (once) and point at the bundled GGUF, with the ``llm.*`` settings applied."""
        return cls(
            model_path=ensure_local_gguf(settings),
            context_tokens=settings.llm.context_tokens,
            num_threads=settings.llm.num_threads,
            prompt_cache_mb=settings.llm.prompt_cache_mb,
            weight_repacking=settings.llm.weight_repacking,
            temperature=settings.llm.temperature,
            max_tokens=settings.llm.max_tokens,
        )

    @property
    def _llm_type(self) -> str:
        return "ragpilot-llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "context_tokens": self.context_tokens,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def loaded(self) -> _LoadedLlama:
        """The loaded llama.cpp model (loads it on first use; about 2 s)."""
        return load_llama(
            self.model_path,
            self.context_tokens,
            self.num_threads,
            self.prompt_cache_mb,
            self.weight_repacking,
        )

    def _completion_options(self, stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        options: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        options.update({name: kwargs[name] for name in _PER_CALL_OPTIONS if kwargs.get(name) is not None})
        if stop:
            options["stop"] = stop
        return options

    def _logits_processors(self, loaded: _LoadedLlama, kwargs: dict[str, Any]) -> list[Any]:
        """The processors a call asks for: first-token alternatives when ``logprobs`` is set, the mask of
        an unlikely opening when ``unlikely_opening`` is. The alternatives are read before the mask."""
        processors: list[Any] = []
        if kwargs.get("logprobs"):
            top = min(max(int(kwargs.get("top_logprobs") or 1), 1), MAX_TOP_LOGPROBS)
            processors.append(_FirstTokenLogprobs(loaded.llama, top))
        if unlikely := kwargs.get("unlikely_opening"):
            words = tuple(unlikely["words"])
            processors.append(
                _UnlikelyOpeningMask(_opening_token_ids(loaded.llama, words), unlikely["below"])
            )
        return processors

    def _response_metadata(self, finish_reason: str | None, watchers: list[Any]) -> dict[str, Any]:
        metadata: dict[str, Any] = {"finish_reason": finish_reason, "model_name": self.model_name}
        for watcher in watchers:
            metadata.update(watcher.metadata())
        return metadata

    def _context_overflow(self, exc: ValueError) -> ProviderUnavailable:
        return ProviderUnavailable(
            PROVIDER_LABEL, f"{exc}; shorten the prompt or raise llm.context_tokens ({self.context_tokens})"
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        from llama_cpp import LogitsProcessorList

        loaded = self.loaded()
        options = self._completion_options(stop, kwargs)
        watchers = self._logits_processors(loaded, kwargs)
        if watchers:
            options["logits_processor"] = LogitsProcessorList(watchers)
        with loaded.lock:
            evaluated_before = _prompt_tokens_evaluated(loaded.llama)
            try:
                response = loaded.llama.create_chat_completion(_as_llama_messages(messages), **options)
            except ValueError as exc:  # llama.cpp: "Requested tokens (...) exceed context window of ..."
                raise self._context_overflow(exc) from exc
            evaluated_after = _prompt_tokens_evaluated(loaded.llama)
        choice = response["choices"][0]
        usage = response["usage"]
        message = AIMessage(
            content=choice["message"].get("content") or "",
            usage_metadata=_usage(
                usage["prompt_tokens"], usage["completion_tokens"], evaluated_before, evaluated_after
            ),
            response_metadata=self._response_metadata(choice["finish_reason"], watchers),
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        from llama_cpp import LogitsProcessorList

        loaded = self.loaded()
        options = self._completion_options(stop, kwargs)
        counter = _TokenCounter()
        watchers = self._logits_processors(loaded, kwargs)
        finish_reason = None
        # The lock is held for the whole stream; an abandoned stream releases it when it is closed.
        with loaded.lock:
            evaluated_before = _prompt_tokens_evaluated(loaded.llama)
            try:
                pieces = loaded.llama.create_chat_completion(
                    _as_llama_messages(messages),
                    stream=True,
                    logits_processor=LogitsProcessorList([counter, *watchers]),
                    **options,
                )
                for piece in pieces:
                    choice = piece["choices"][0]
                    finish_reason = choice.get("finish_reason") or finish_reason
                    text = choice["delta"].get("content")
                    if not text:
                        continue
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
                    if run_manager:
                        run_manager.on_llm_new_token(text, chunk=chunk)
                    yield chunk
            except ValueError as exc:
                raise self._context_overflow(exc) from exc
            evaluated_after = _prompt_tokens_evaluated(loaded.llama)
        # Every sampling step produced a completion token except the end-of-turn token on a normal stop.
        completion_tokens = counter.sampling_steps - (1 if finish_reason == "stop" else 0)
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata=_usage(
                    counter.prompt_tokens, max(completion_tokens, 0), evaluated_before, evaluated_after
                ),
                response_metadata=self._response_metadata(finish_reason, watchers),
                chunk_position="last",
            )
        )

    def with_structured_output(
        self,
        schema: type[BaseModel] | dict[str, Any],
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        """A Runnable returning a validated ``schema`` instance (a dict for a JSON-schema dict).

        The reply is grammar-constrained to the JSON schema; an invalid one (typically cut off by
        ``max_tokens``) is retried once with the error shown and twice the token budget, then raises
        ``StructuredOutputError``. Extra keyword arguments (``method``, ``strict``) are accepted for
        signature compatibility with ChatOpenAI and ignored: there is one method here.
        """
        output_schema = OutputSchema.from_user(schema)
        response_format = {"type": "json_object", "schema": output_schema.json_schema}
        first = self.bind(response_format=response_format)
        retry = self.bind(response_format=response_format, max_tokens=self.max_tokens * 2)
        return structured_output_runnable(first, retry, output_schema, include_raw=include_raw)
