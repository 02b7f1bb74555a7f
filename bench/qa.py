"""QA benchmarks with the offline models (issue 4's closing figures), through ``agent.eval.qa``.

Runs (each saved as ``bench/results/qa_<run>.json`` with every question's answer and scores):

- ``hotpot_single`` / ``hotpot_iterative`` / ``hotpot_auto``: HotpotQA dev distractor, the first N
  questions (knowledge base: all paragraphs of those N questions), EM, F1, supporting recall@10;
- ``squad``: SQuAD v1.1 dev, a fixed seeded sample (seed 0) of N questions over their articles;
- ``rgb_noise``: RGB zh_refine, first N questions, positive + negative passages indexed (accuracy = the
  answer contained, RGB's metric, with noise);
- ``rgb_negative``: the same questions with only the negatives indexed (rejection rate);
- ``cmrc``: CMRC 2018 trial, a fixed seeded sample (seed 0) of N questions.

The local LLM takes seconds per question, so N is set per dataset (``--limit-*``); a finished run is
not repeated unless ``--force`` (its JSON is reused), and each question is appended to
``.ragpilot-bench/partial/qa_<run>.partial.jsonl`` as it finishes; a run that was interrupted resumes from that file (with
``--force``, only when ``--resume`` is given). ``qa_summary.json`` gathers the headline figures.

    .venv/bin/python -m bench.qa --limit-hotpot 20 --limit-squad 20 --limit-rgb 20 --limit-cmrc 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from agent.eval.shared_data import shared_data_dir
from bench.partials import partial_path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = shared_data_dir()
RESULTS = ROOT / "bench" / "results"

RUNS: dict[str, dict[str, Any]] = {
    "hotpot_single": {"file": "hotpotqa/hotpot_dev_distractor_first100.json", "format": "hotpot", "route": "single", "limit": "hotpot"},
    "hotpot_iterative": {"file": "hotpotqa/hotpot_dev_distractor_first100.json", "format": "hotpot", "route": "iterative", "limit": "hotpot"},
    "hotpot_auto": {"file": "hotpotqa/hotpot_dev_distractor_first100.json", "format": "hotpot", "route": "auto", "limit": "hotpot"},
    "squad": {"file": "squad/dev-v1.1.json.gz", "format": "squad", "route": "auto", "limit": "squad", "seed": 0},
    "rgb_noise": {"file": "rgb/zh_refine.json", "format": "rgb", "route": "auto", "limit": "rgb"},
    "rgb_negative": {"file": "rgb/zh_refine.json", "format": "rgb", "route": "auto", "limit": "rgb", "negative_only": True},
    "cmrc": {"file": "cmrc2018/cmrc2018_trial.json", "format": "squad", "route": "auto", "limit": "cmrc", "seed": 0},
}  # fmt: skip


def headline(report: dict[str, Any]) -> dict[str, Any]:
    """The figures a closing note quotes, from one saved report."""
    return {
        "questions": report["questions"],
        "route_request": report["route_request"],
        "metrics": report["metrics"],
        "supported_share": report["support"]["supported_share"],
        "llm_calls_per_question": report["llm_calls_per_question"],
        "latency_p50_s": round(report["latency"]["p50_ms"] / 1000, 2),
        "latency_p95_s": round(report["latency"]["p95_ms"] / 1000, 2),
        "routes": {
            name: {
                "questions": stats["questions"],
                "llm_calls_per_question": stats["llm_calls_per_question"],
                "latency_p50_s": round(stats["latency"]["p50_ms"] / 1000, 2),
                "latency_p95_s": round(stats["latency"]["p95_ms"] / 1000, 2),
            }
            for name, stats in report["routes"].items()
        },
        "errors": report["errors"],
        "seconds": report["seconds"],
    }


_RUN_LABELS = {
    "hotpot_single": "HotpotQA\nsingle", "hotpot_iterative": "HotpotQA\nIRCoT", "hotpot_auto": "HotpotQA\nauto",
    "squad": "SQuAD", "cmrc": "CMRC\n2018", "rgb_noise": "RGB\nnoise", "rgb_negative": "RGB\nnegatives",
}  # fmt: skip


def plot_summary(summary: dict[str, Any], path: Path) -> None:
    """Answer quality beside latency per run: what each route buys and what it costs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [name for name in RUNS if name in summary.get("runs", {})]
    if not names:
        return
    runs = [summary["runs"][name] for name in names]
    labels = [f"{_RUN_LABELS[n]}\n(n={r['questions']})" for n, r in zip(names, runs, strict=True)]
    # RGB negatives: the right outcome is a refusal, so its bar is the rejection rate.
    quality = [r["metrics"].get("rejection_rate", r["metrics"]["contained"]) for r in runs]
    refused = [r["metrics"]["refusal_rate"] if "rejection_rate" not in r["metrics"] else 0.0 for r in runs]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    xs = range(len(names))
    left.bar([x - 0.2 for x in xs], quality, width=0.4, label="answer contained (RGB negatives: rejected)")
    left.bar([x + 0.2 for x in xs], refused, width=0.4, label="refused", color="#bbbbbb")
    left.set_xticks(list(xs), labels, fontsize=8)
    left.set_ylim(0, 1)
    left.set_title("answer quality, offline models")
    left.legend(fontsize=8)
    right.bar(list(xs), [r["latency_p50_s"] for r in runs], label="p50")
    right.scatter(list(xs), [r["latency_p95_s"] for r in runs], color="black", zorder=3, label="p95")
    right.set_xticks(list(xs), labels, fontsize=8)
    right.set_ylabel("seconds per question")
    right.set_title("latency on 2 CPU cores")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _resumable(partial: Path, limit: int) -> list[Any]:
    """The results an interrupted run of this size left in its partial file (none if it is absent)."""
    from agent.eval.qa import QuestionResult

    if not partial.is_file():
        return []
    lines = [line for line in partial.read_text(encoding="utf-8").splitlines() if line.strip()]
    results = [QuestionResult.model_validate_json(line) for line in lines]
    return results[:limit]


def saved_limit(saved: dict[str, Any]) -> int:
    """The ``limit`` a saved run was made with: the questions run plus those skipped (no text)."""
    return saved["questions"] + len(saved.get("skipped_questions", []))


def rebuild_summary() -> int:
    """qa_summary.json and qa_summary.png from every finished run's JSON (a run still under way, or
    absent, is left out)."""
    runs = {
        name: headline(json.loads((RESULTS / f"qa_{name}.json").read_text(encoding="utf-8")))
        for name in RUNS
        if (RESULTS / f"qa_{name}.json").is_file()
    }
    summary = {"runs": runs, "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}}
    summary_path = RESULTS / "qa_summary.json"
    summary_path.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    plot_summary(summary, RESULTS / "qa_summary.png")
    print(f"saved {summary_path} and qa_summary.png: {', '.join(runs) or 'no finished runs'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--home", type=Path, default=ROOT / ".ragpilot-bench")
    for name, default in (("hotpot", 100), ("squad", 200), ("rgb", 300), ("cmrc", 200)):
        parser.add_argument(f"--limit-{name}", type=int, default=default)
    parser.add_argument("--only", nargs="*", choices=sorted(RUNS), help="run only these")
    parser.add_argument("--force", action="store_true", help="re-run runs whose JSON already exists")
    parser.add_argument(
        "--resume", action="store_true",
        help="with --force: keep the questions an interrupted run finished (qa_<run>.partial.jsonl)",
    )  # fmt: skip
    parser.add_argument(
        "--qids", nargs="+", help="only these questions of the first N (the index keeps all N); needs --tag",
    )  # fmt: skip
    parser.add_argument(
        "--tag", help="save as qa_<run>_<tag>.json, out of qa_summary.json (a subset, or another setting)",
    )  # fmt: skip
    parser.add_argument(
        "--summary-only", action="store_true",
        help="run nothing: rebuild qa_summary.json and its plot from the finished runs' JSON files",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.qids and not args.tag:
        parser.error("--qids needs --tag: a subset's figures must not stand as the run's")
    if args.summary_only:
        return rebuild_summary()

    from agent.eval.qa import QAEvalConfig, QuestionResult, run_qa_eval

    RESULTS.mkdir(parents=True, exist_ok=True)
    summary_path = RESULTS / "qa_summary.json"
    summary: dict[str, Any] = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    summary.setdefault("runs", {})
    for name in args.only or list(RUNS):
        spec = RUNS[name]
        limit = getattr(args, f"limit_{spec['limit']}")
        stem = f"qa_{name}_{args.tag}" if args.tag else f"qa_{name}"
        out = RESULTS / f"{stem}.json"
        if out.is_file() and not args.force:
            saved = json.loads(out.read_text())
            if saved_limit(saved) == limit:
                print(f"{name}: reusing {out.name}")
                summary["runs"][name] = headline(saved)
                continue
        config = QAEvalConfig(
            dataset=args.data / spec["file"], format=spec["format"], limit=limit, sample_seed=spec.get("seed"),
            route=spec["route"], negative_only=spec.get("negative_only", False), qids=args.qids,
        )  # fmt: skip
        partial = partial_path(stem)
        if args.force and not args.resume:
            partial.unlink(missing_ok=True)
        done = _resumable(partial, limit)

        def record(result: QuestionResult, partial: Path = partial) -> None:
            with partial.open("a", encoding="utf-8") as f:
                f.write(result.model_dump_json() + "\n")

        started = time.perf_counter()
        resumed = f", resuming after {len(done)} done" if done else ""
        print(f"{name}: {limit} questions, route {spec['route']}{resumed} ...", flush=True)
        report = run_qa_eval(
            config, home=args.home, progress=sys.stderr.isatty(), on_result=record, done=done
        )
        saved = report.model_dump(mode="json")
        saved["command"] = "python -m bench.qa " + " ".join(argv if argv is not None else sys.argv[1:])
        saved["settings_from_environment"] = {
            k: v for k, v in os.environ.items() if k.startswith("RAGPILOT_")
        }
        saved["load_average_at_end"] = os.getloadavg()[0]
        saved["resumed_questions"] = len(done)  # their time is not in "seconds"; their latencies are
        out.write_text(json.dumps(saved, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        partial.unlink(missing_ok=True)
        if args.tag:
            print(f"{name}: saved {out.name}: {json.dumps(headline(saved)['metrics'])}", flush=True)
            continue
        summary["runs"][name] = headline(saved)
        print(
            f"{name}: {json.dumps(headline(saved)['metrics'])} in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
        summary["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version()}
        summary_path.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    summary_path.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    plot_summary(summary, RESULTS / "qa_summary.png")
    print(f"saved {summary_path} and qa_summary.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
