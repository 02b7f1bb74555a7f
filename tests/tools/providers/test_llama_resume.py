"""A local reply does not depend on the calls before it: prefix reuse is cut so that every position is
computed as in an evaluation from nothing (batches of 8 tokens or more, starting at multiples of 8)."""

from __future__ import annotations

import numpy as np
import pytest

from core.settings import load_settings
from tools.providers.chat_local import LocalLlamaChatModel
from tools.providers.llama_resume import (
    clean_prefix_after,
    first_token_logits,
    last_batch_start,
    reusable_prefix,
)


@pytest.mark.parametrize(
    ("prompt_tokens", "start"),
    [
        (7, 0),  # too short to split: evaluated whole
        (15, 0),
        (16, 8),  # the last batch is 8-15 tokens long and starts at a multiple of 8
        (23, 8),
        (24, 16),
        (1027, 1016),
    ],
)
def test_the_last_batch_holds_8_to_15_tokens_from_a_multiple_of_8(prompt_tokens, start):
    assert last_batch_start(prompt_tokens) == start


@pytest.mark.parametrize(
    ("shared", "clean", "prompt_tokens", "reused"),
    [
        (600, 600, 1000, 600),  # a clean shared prefix on a multiple of 8 is kept whole
        (603, 1000, 1000, 600),  # cut to a multiple of 8
        (1000, 1000, 1000, 992),  # the same prompt again: its last batch (8 tokens) is evaluated again
        (990, 1000, 1000, 984),  # 10 tokens left after the shared prefix: still the last batch
        (800, 300, 1000, 296),  # beyond the clean prefix (generated tokens, a short tail) nothing is reused
        (5, 8, 12, 0),  # a prompt of fewer than 16 tokens is evaluated whole
        (0, 1000, 1000, 0),
    ],
)
def test_only_a_clean_shared_prefix_before_the_last_batch_is_reused(shared, clean, prompt_tokens, reused):
    assert reusable_prefix(shared, clean, prompt_tokens) == reused


def test_an_evaluated_prompt_is_clean_up_to_its_last_multiple_of_8():
    assert clean_prefix_after(1000) == 1000
    assert clean_prefix_after(1007) == 1000
    assert clean_prefix_after(5) == 0


@pytest.mark.llm
def test_the_same_prompt_gets_the_same_logits_whatever_was_evaluated_before():
    llama = LocalLlamaChatModel.from_settings(load_settings(llm={"prompt_cache_mb": 64})).loaded().llama
    paragraph = "The ferry to Holm leaves at 07:40 and takes 35 minutes; the return leaves at 17:10. "
    prompt = llama.tokenize(
        (
            "<|im_start|>user\n"
            + paragraph * 6
            + "When does the return leave?<|im_end|>\n<|im_start|>assistant\n"
        ).encode(),
        special=True,
    )
    other = llama.tokenize(b" On Sundays there is no service.", add_bos=False)

    llama.reset()
    from_nothing = first_token_logits(llama, prompt)
    for predecessor in (
        prompt[:-1] + other,  # shares all but the last token
        prompt[:-3] + other,
        prompt[:-9] + other,  # all but 9: a batch of 9 from an unaligned position, without the guard
        prompt,  # the prompt itself, with its generated token after it
        other,  # another prompt: the state comes back from the prompt cache
    ):
        llama.create_completion(predecessor, max_tokens=4, temperature=0)
        assert np.array_equal(first_token_logits(llama, prompt), from_nothing)
