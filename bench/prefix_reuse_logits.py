"""Does a local reply depend on the call before it? The next-token logits of one prompt, evaluated whole
and resumed after a reused prefix of every length llama.cpp's prefix matching can leave.

llama-cpp-python keeps the last prompt's KV cache (and ``llm.prompt_cache_mb`` earlier ones) and
evaluates only the part of a new prompt after the longest shared prefix; a prompt asked again right
after itself leaves one token to evaluate. If the logits depend on where that split falls, greedy
replies depend on what was asked before, and two settings compared side by side (``bench.switch_pair``
asks each question under one setting, then the other) diverge where neither setting made a difference.

For a prompt built from a fixed paragraph repeated ``--tokens // 40`` times (the default: 2,545
tokens), the script evaluates it whole, then for each split point evaluates the prefix and the rest
separately, and saves the largest absolute logit difference and whether the greedy token is the same
(``rows``: llama.cpp's own evaluation, what llama-cpp-python did before ``llama_resume``). Then the same
through ragpilot's model (``guarded_rows``): a prompt that shares all but that many tokens is answered
first, then the prompt, whose logits are compared with the prompt's answered from nothing.
No network, one model load; about 30 whole-prompt evaluations (minutes on 2 cores, more under load).

    .venv/bin/python -m bench.prefix_reuse_logits
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.partials import save_result  # noqa: E402

PARAGRAPH = (
    "Corvane Labs was founded in 1994 in Aldmoor by Hester Quayle. Hester Quayle was born in 1961 in "
    "Carvel. Aldmoor has about 84,000 people and a cathedral from 1210. "
)


def chatml_prompt(paragraphs: int) -> str:
    return (
        "<|im_start|>system\nYou answer from the passages.<|im_end|>\n<|im_start|>user\n"
        + PARAGRAPH * paragraphs
        + "Where was the founder born?<|im_end|>\n<|im_start|>assistant\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--tokens",
        type=int,
        default=1600,
        help="prompt size: the paragraph is repeated tokens // 40 times (1600: 2,545 tokens)",
    )
    args = parser.parse_args()
    import numpy as np

    from core.settings import load_settings
    from tools.providers.chat_local import LocalLlamaChatModel
    from tools.providers.llama_resume import first_token_logits

    loaded = LocalLlamaChatModel.from_settings(load_settings()).loaded()
    llama = loaded.llama
    tokens = llama.tokenize(chatml_prompt(max(1, args.tokens // 40)).encode(), special=True)

    def last_logits(split: int) -> Any:
        llama.reset()
        for part in (tokens[:split], tokens[split:]) if split else (tokens,):
            llama.eval(part)
        # astype copies: the next eval overwrites llama.cpp's buffer
        return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(np.float64)

    whole = last_logits(0)
    rows = []
    for remainder in (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32, 64, 300, len(tokens) - 10):
        logits = last_logits(len(tokens) - remainder)
        rows.append(
            {
                "evaluated_after_prefix": remainder,
                "max_abs_logit_difference": round(float(np.abs(logits - whole).max()), 6),
                "same_greedy_token": bool(logits.argmax() == whole.argmax()),
            }
        )
        print(rows[-1], flush=True)
    repeated = float(np.abs(last_logits(0) - whole).max())

    other = llama.tokenize(b" Moreover, the river floods every spring.", add_bos=False)

    llama.reset()
    cache, llama.cache = llama.cache, None
    from_nothing = first_token_logits(llama, tokens)
    llama.cache = cache
    guarded_rows = []
    for remainder in (1, 2, 3, 5, 7, 8, 9, 12, 16, 300, len(tokens) - 10, 0):
        llama.create_completion(
            tokens[: len(tokens) - remainder] + (other if remainder else []), max_tokens=4
        )
        logits = first_token_logits(llama, tokens)
        guarded_rows.append(
            {
                "shared_with_the_call_before": len(tokens) - remainder,
                "max_abs_logit_difference": round(float(np.abs(logits - from_nothing).max()), 6),
                "same_greedy_token": bool(logits.argmax() == from_nothing.argmax()),
            }
        )
        print(guarded_rows[-1], flush=True)
    save_result(
        "prefix_reuse_logits.json",
        {
            "prompt_tokens": len(tokens),
            "n_batch": llama.n_batch,
            "weights_repacked": loaded.use_extra_buffers,
            "repacking_reason": loaded.repacking_reason,
            "whole_prompt_again_max_abs_difference": repeated,
            "rows": rows,
            "guarded_from_nothing_against_whole_max_abs_difference": float(
                np.abs(from_nothing - whole).max()
            ),
            "guarded_rows": guarded_rows,
            "load_average": os.getloadavg(),
            "command": "python -m bench.prefix_reuse_logits " + " ".join(sys.argv[1:]),
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
