"""Router benchmark: the trained local classifier vs the LLM classifier on the held-out mixture.

- local: every held-out question (``bench/train_router.py``'s test slice), timed per question
  (surface cues + the e5 query embedding, the embedder already loaded);
- llm: a stratified sample of the same slice (``--llm-sample`` per source group; the local LLM takes
  seconds per question), timed per question after one warm-up call;
- both on that same sample, for a paired comparison.

"Accuracy per millisecond" = accuracy on the shared sample / mean latency per question. The winner is
written to the router weights as ``auto_choice`` (what ``settings.graph.router = "auto"`` uses), with
the figures behind it. Results: ``bench/results/router.json``.

    .venv/bin/python -m bench.router [--llm-sample 10] [--no-llm]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.train_router import DEFAULT_DATA, RESULTS, LabelledQuestion, load_mixture, scores

ADAPTIVE_RAG_T5_LARGE_ACCURACY = 0.545  # Adaptive-RAG (Jeong et al., 2024), its classifier's accuracy


def latency_summary(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000.0
    return {
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p95_ms": round(float(np.percentile(ms, 95)), 2),
        "mean_ms": round(float(ms.mean()), 2),
    }


def run_classifier(
    classifier: Any, questions: list[LabelledQuestion], verbose: bool = False
) -> dict[str, Any]:
    """Classify every question, timing each call; scores plus latency."""
    predicted, seconds = [], []
    for n, item in enumerate(questions, start=1):
        started = time.perf_counter()
        decision = classifier.classify(item.question)
        seconds.append(time.perf_counter() - started)
        predicted.append(decision.route)
        if verbose:
            print(f"  {n}/{len(questions)} {seconds[-1]:.1f} s  {item.route} -> {decision.route}", flush=True)
    result = scores([q.route for q in questions], predicted, [q.source for q in questions])
    result["latency"] = latency_summary(seconds)
    return result


def stratified_sample(
    questions: list[LabelledQuestion], per_source: int, seed: int = 0
) -> list[LabelledQuestion]:
    by_source: dict[str, list[LabelledQuestion]] = defaultdict(list)
    for q in questions:
        by_source[q.source].append(q)
    rng = random.Random(seed)
    sample: list[LabelledQuestion] = []
    for source in sorted(by_source):
        group = by_source[source]
        sample.extend(rng.sample(group, min(per_source, len(group))))
    return sample


def accuracy_per_ms(result: dict[str, Any]) -> float:
    return result["accuracy"] / max(result["latency"]["mean_ms"], 1e-3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--llm-sample", type=int, default=10, help="questions per source group for the LLM")
    parser.add_argument("--no-llm", action="store_true", help="measure the local classifier only")
    parser.add_argument("--out", type=Path, default=RESULTS / "router.json")
    args = parser.parse_args(argv)

    from core.settings import load_settings
    from graphs.rag.classifier.local import ROUTER_MODEL_PATH, FeatureComplexityClassifier
    from tools.providers.embedder_factory import get_local_e5_embedder

    test = load_mixture(args.data)["test"]
    local = FeatureComplexityClassifier(embedder=get_local_e5_embedder(load_settings()))
    local.classify("warm-up")  # load the embedder outside the timings
    report: dict[str, Any] = {
        "test_questions": {s: sum(q.source == s for q in test) for s in sorted({q.source for q in test})},
        "local": {"variant": local.weights.measured.get("variant"), **run_classifier(local, test)},
        "reference": {"adaptive_rag_t5_large_accuracy": ADAPTIVE_RAG_T5_LARGE_ACCURACY},
    }
    print(f"local ({report['local']['variant']}) on {len(test)} held-out questions: "
          f"accuracy {report['local']['accuracy']:.3f}  macro-F1 {report['local']['macro_f1']:.3f}  "
          f"p50 {report['local']['latency']['p50_ms']:.1f} ms")  # fmt: skip

    if not args.no_llm:
        from core.settings import load_settings
        from graphs.rag.classifier.llm import LLMComplexityClassifier
        from tools.providers.chat_factory import get_chat_model

        sample = stratified_sample(test, args.llm_sample)
        llm = LLMComplexityClassifier(get_chat_model(load_settings()))
        llm.classify("warm-up: hello")  # model load outside the timings
        llm_result = run_classifier(llm, sample, verbose=True)
        local_on_sample = run_classifier(local, sample)
        choice = "local" if accuracy_per_ms(local_on_sample) >= accuracy_per_ms(llm_result) else "llm"
        report["sample"] = {"questions": len(sample), "per_source": args.llm_sample}
        report["llm_on_sample"] = llm_result
        report["local_on_sample"] = local_on_sample
        report["auto"] = {
            "choice": choice,
            "local_accuracy_per_ms": round(accuracy_per_ms(local_on_sample), 5),
            "llm_accuracy_per_ms": round(accuracy_per_ms(llm_result), 5),
        }
        print(f"on a stratified sample of {len(sample)}: llm accuracy {llm_result['accuracy']:.3f} "
              f"macro-F1 {llm_result['macro_f1']:.3f} mean {llm_result['latency']['mean_ms']:.0f} ms; "
              f"local accuracy {local_on_sample['accuracy']:.3f} mean {local_on_sample['latency']['mean_ms']:.1f} ms "
              f"-> auto = {choice}")  # fmt: skip
        weights = json.loads(ROUTER_MODEL_PATH.read_text(encoding="utf-8"))
        weights["auto_choice"] = choice
        weights.setdefault("measured", {})["auto"] = {
            "rule": "accuracy / mean ms per question on a stratified held-out sample (bench/router.py)",
            **report["auto"],
            "local": {k: local_on_sample[k] for k in ("accuracy", "macro_f1", "latency")},
            "llm": {k: llm_result[k] for k in ("accuracy", "macro_f1", "latency")},
        }
        ROUTER_MODEL_PATH.write_text(json.dumps(weights, ensure_ascii=False) + "\n", encoding="utf-8")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
