"""Make a local reply independent of the calls before it: resume a llama.cpp prompt only where that computes
every position as evaluating the prompt from nothing does.

llama-cpp-python evaluates only the part of a prompt after the prefix it shares with the tokens already
in the KV cache (the last call's, or a state ``llm.prompt_cache_mb``'s cache restored); a prompt sent
again leaves one token. llama.cpp computes a batch of fewer than 8 tokens by another kernel path than a
larger one: ``bench.prefix_reuse_logits`` measured next-token logits 0.36–0.42 away from a whole
evaluation's with 1–7 tokens left, identical with 8 or more (and across batch sizes of 8 and more). So a
greedy reply depended on the call before it, and two settings compared side by side diverged where
neither made a difference.

The guard makes every prompt, whether evaluated whole or resumed, be computed in batches of 8 tokens
or more that start at multiples of 8 (kernels that group rows, as repacked weights do 4 at a time, then
group them alike):
- the prompt up to the last multiple of 8 that leaves 8–15 tokens is evaluated first (in batches of
  ``n_batch``, a multiple of 8), then llama-cpp-python evaluates those 8–15 and samples;
- only a cached prefix computed that way is reused, cut to a multiple of 8: a generated token (decoded
  one at a time) is never reused, nor the last 1–7 tokens of a prompt.
The cost is 8–15 tokens evaluated again where one would have done; a whole evaluation costs nothing more.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

# Batches smaller than this take another kernel path; measured on x86-64 (AVX2, weights not repacked)
# by bench.prefix_reuse_logits, which measures it again on any machine.
SMALL_BATCH = 8


def last_batch_start(prompt_tokens: int) -> int:
    """Where the last batch of a prompt starts: the last multiple of 8 that leaves 8–15 tokens (0 if
    the prompt is shorter than 16)."""
    return max(prompt_tokens - SMALL_BATCH, 0) // SMALL_BATCH * SMALL_BATCH


def reusable_prefix(shared_prefix: int, clean_prefix: int, prompt_tokens: int) -> int:
    """How many leading tokens of a prompt to keep from the KV cache: the prefix it shares with the
    cache, computed the guarded way (``clean_prefix``), cut to a multiple of 8, before its last batch."""
    usable = min(shared_prefix, clean_prefix, last_batch_start(prompt_tokens))
    return usable - usable % SMALL_BATCH


def clean_prefix_after(prompt_tokens: int) -> int:
    """How many leading positions of an evaluated prompt a later prompt may reuse."""
    return prompt_tokens - prompt_tokens % SMALL_BATCH


def first_token_logits(llama: Any, prompt: Sequence[int]) -> Any:
    """The logits the reply's first token is sampled from, through ``create_completion`` (so through the
    guard and the prompt cache), as float64: what ``bench.prefix_reuse_logits`` and the tests compare."""
    import numpy as np

    seen: list[Any] = []

    def keep(input_ids: Any, scores: Any) -> Any:
        if not seen:
            seen.append(np.array(scores, dtype=np.float64))
        return scores

    llama.create_completion(list(prompt), max_tokens=1, temperature=0, logits_processor=[keep])
    return seen[0]


class ExactResume:
    """Installed on one ``llama_cpp.Llama``: wraps its ``generate``, ``save_state`` and ``load_state`` so that
    prefix reuse (live or from the prompt cache) never changes a reply.

    ``Llama.generate`` reuses at most ``n_tokens`` cached tokens, so evaluating up to the last batch and
    setting ``n_tokens`` there before it runs is enough; the states the prompt cache keeps carry their
    clean prefix with them.
    """

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.clean = 0
        self._generate = llama.generate
        self._save_state = llama.save_state
        self._load_state = llama.load_state
        llama.generate = self.generate
        llama.save_state = self.save_state
        llama.load_state = self.load_state

    def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Iterator[int]:
        tokens = list(tokens)
        llama = self.llama
        cached = min(self.clean, llama.n_tokens)
        reuse = reusable_prefix(
            llama.longest_token_prefix(llama.input_ids[:cached].tolist(), tokens), cached, len(tokens)
        )
        last_batch = last_batch_start(len(tokens))
        llama.n_tokens = reuse
        self.clean = reuse
        if last_batch > reuse:
            llama.eval(tokens[reuse:last_batch])  # in n_batch pieces from a multiple of 8
            self.clean = last_batch
        # Llama.generate keeps the n_tokens it has (all shared) and evaluates the last batch
        evaluated = False
        for token in self._generate(tokens, *args, **kwargs):
            if not evaluated:  # the prompt is evaluated before the first token is yielded
                self.clean = clean_prefix_after(len(tokens))
                evaluated = True
            yield token

    def save_state(self) -> Any:
        state = self._save_state()
        state.clean_prefix = self.clean
        return state

    def load_state(self, state: Any) -> None:
        self._load_state(state)
        self.clean = getattr(state, "clean_prefix", 0)
