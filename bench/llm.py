"""Measure the local LLM on this machine: prompt and generation tokens/s per weight layout, side by side.

    .venv/bin/python bench/llm.py [--runs 5] [--threads 2] [--layouts on,off] [--label NAME]

Each layout (``on``: llama.cpp repacks the weights for this CPU; ``off``: no extra buffer types) is
loaded once in this process, and the rounds alternate between them, so a busy neighbour on a shared
2-core machine slows both alike and the per-round ratios stay readable. Prompt speed comes from a
RAG-sized prompt (about 1,100 tokens) with a 1-token reply; generation speed from a short prompt with a
fixed 64-token reply (timing the stream from its first token). "turn_s" estimates one answer: 1,500
prompt tokens and 60 generated.

Saves bench/results/llm.json (llm-NAME.json with ``--label``, e.g. one per llama.cpp build), with the
CPU's relevant flags, llama.cpp's compiled-in features and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from core.settings import load_settings
from tools.providers.llama_cpu import RELEVANT_CPU_FLAGS, cpu_model_name, open_llama, read_cpu_flags
from tools.providers.local_gguf import ensure_local_gguf
from tools.providers.native_probe import llama_system_info

LONG_PROMPT = " ".join(
    f"Passage {i}: the river town kept records of every flood, harvest and market day since 1820."
    for i in range(60)
)
TURN_PROMPT_TOKENS, TURN_GENERATED_TOKENS = 1500, 60


def prompt_rate(llama: Any, run: int) -> float:
    llama.reset()  # no reuse of an earlier prompt: measure real prompt processing
    started = time.perf_counter()
    reply = llama.create_completion(f"Run {run}. {LONG_PROMPT} Reply with OK.", max_tokens=1, temperature=0)
    return reply["usage"]["prompt_tokens"] / (time.perf_counter() - started)


def generation_rate(llama: Any, run: int) -> float:
    llama.reset()
    first_token_at, pieces = None, 0
    for chunk in llama.create_completion(
        f"Run {run}. Count upwards in words: one, two, three,", max_tokens=64, temperature=0, stream=True
    ):
        if first_token_at is None:
            first_token_at = time.perf_counter()
        pieces += 1 if chunk["choices"][0]["text"] else 0
    return max(pieces - 1, 1) / (time.perf_counter() - (first_token_at or time.perf_counter()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layouts", default="on,off", help="comma-separated: on (repacked), off")
    parser.add_argument("--label", default="", help="names the llama.cpp build measured: llm-LABEL.json")
    args = parser.parse_args()
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]

    load_before = os.getloadavg()[0]
    model_path = ensure_local_gguf(load_settings())
    models, load_seconds = {}, {}
    for layout in layouts:
        started = time.perf_counter()
        models[layout] = open_llama(model_path, 4096, args.threads, use_extra_buffers=layout == "on")
        load_seconds[layout] = round(time.perf_counter() - started, 2)

    prompt: dict[str, list[float]] = {layout: [] for layout in layouts}
    generation: dict[str, list[float]] = {layout: [] for layout in layouts}
    for run in range(args.runs):
        order = layouts if run % 2 == 0 else layouts[::-1]
        for layout in order:
            prompt[layout].append(prompt_rate(models[layout], run))
            generation[layout].append(generation_rate(models[layout], run))

    per_layout = {}
    for layout in layouts:
        p, g = statistics.median(prompt[layout]), statistics.median(generation[layout])
        per_layout[layout] = {
            "load_s": load_seconds[layout],
            "prompt_tok_per_s_median": round(p, 1),
            "generation_tok_per_s_median": round(g, 1),
            "prompt_tok_per_s_runs": [round(x, 1) for x in prompt[layout]],
            "generation_tok_per_s_runs": [round(x, 1) for x in generation[layout]],
            "turn_s": round(TURN_PROMPT_TOKENS / p + TURN_GENERATED_TOKENS / g, 2),
        }
    result: dict[str, Any] = {
        "label": args.label or None,
        "model": model_path.name,
        "threads": args.threads,
        "runs": args.runs,
        "llama_cpp_system_info": llama_system_info().strip(),
        "cpu": cpu_model_name(),
        "cpu_flags": sorted(read_cpu_flags() & set(RELEVANT_CPU_FLAGS)),
        "layouts": per_layout,
        "load_average_1m_before": round(load_before, 2),
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        "cpu_count": os.cpu_count(),
    }
    if {"on", "off"} <= set(layouts):
        result["ratio_on_over_off"] = {
            "prompt": [round(a / b, 3) for a, b in zip(prompt["on"], prompt["off"], strict=True)],
            "generation": [round(a / b, 3) for a, b in zip(generation["on"], generation["off"], strict=True)],
        }
    out = Path(__file__).parent / "results" / (f"llm-{args.label}.json" if args.label else "llm.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "llama_cpp_system_info"}))


if __name__ == "__main__":
    main()
