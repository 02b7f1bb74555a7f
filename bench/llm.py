"""Measure the local LLM on this machine: load time, prompt and generation tokens/s, structured-call latency.

    .venv/bin/python bench/llm.py [--runs 3] [--threads 2]

Prints one JSON object and saves it under bench/results/llm.json. Prompt speed comes from a long prompt
with a 1-token reply; generation speed from a short prompt with a fixed 64-token reply (timing the
stream, so the prompt's share is subtracted at its first token). The machine's load average is
recorded because other processes on a 2-core machine change every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from pydantic import BaseModel

from agent.providers.chat_local import LocalLlamaChatModel, load_llama
from agent.providers.local_gguf import ensure_local_gguf
from agent.settings import load_settings

LONG_PROMPT = " ".join(
    f"Sentence {i}: the river town kept records of every flood, harvest and market day." for i in range(40)
)


class Verdict(BaseModel):
    supported: bool
    reason: str


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    settings = load_settings(llm={"provider": "local", "num_threads": args.threads, "max_tokens": 64})
    started = time.perf_counter()
    ensure_local_gguf(settings)
    ensure_seconds = time.perf_counter() - started
    model = LocalLlamaChatModel.from_settings(settings)
    loaded = load_llama(model.model_path, model.context_tokens, model.num_threads)
    llama = loaded.llama

    prompt_rates, generation_rates, structured_seconds = [], [], []
    for run in range(args.runs):
        llama.reset()  # no prompt-cache reuse between runs: measure real prompt processing
        t0 = time.perf_counter()
        reply = llama.create_chat_completion(
            [{"role": "user", "content": f"Run {run}. {LONG_PROMPT} Reply with OK."}],
            max_tokens=1,
            temperature=0,
        )
        prompt_rates.append(reply["usage"]["prompt_tokens"] / (time.perf_counter() - t0))

        llama.reset()
        t0 = time.perf_counter()
        first_token_at = None
        pieces = 0
        for chunk in llama.create_completion(
            f"Run {run}. Count upwards in words: one, two, three,", max_tokens=64, temperature=0, stream=True
        ):
            if first_token_at is None:
                first_token_at = time.perf_counter()
            pieces += 1 if chunk["choices"][0]["text"] else 0
        elapsed = time.perf_counter() - (first_token_at or t0)
        generation_rates.append(max(pieces - 1, 1) / elapsed)

        t0 = time.perf_counter()
        model.with_structured_output(Verdict).invoke(
            f"Passage: Paris is the capital of France.\nStatement {run}: Paris is in France.\n"
            "Is the statement supported by the passage?"
        )
        structured_seconds.append(time.perf_counter() - t0)

    result = {
        "model": model.model_name,
        "threads": args.threads,
        "runs": args.runs,
        "ensure_gguf_s": round(ensure_seconds, 3),
        "load_s": round(loaded.load_seconds, 2),
        "prompt_tok_per_s_median": round(statistics.median(prompt_rates), 1),
        "generation_tok_per_s_median": round(statistics.median(generation_rates), 1),
        "structured_call_s_median": round(statistics.median(structured_seconds), 2),
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        "cpu_count": os.cpu_count(),
    }
    out = Path(__file__).parent / "results" / "llm.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
