"""The target table (issue 22's: issue 11's floors and its refusal ceilings), read from the runs saved
in ``bench/results`` (nothing is run here).

Each row names the file it reads: a run still under way (or interrupted) from its ``.partial.jsonl``,
and the row says how many of its questions are in; a finished run from its JSON. Saves
``bench/results/targets.json`` and prints the table as Markdown for ``docs/benchmarks.md``.

    .venv/bin/python -m bench.targets
    .venv/bin/python -m bench.targets --latency qa_hotpot_single_first30_idle.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.partials import PARTIALS  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Target:
    label: str
    run: str  # qa_<run>.json / .partial.jsonl, or a follow_ups*.json run
    size: int  # questions in the full-size run
    measure: str  # a key of figures(): what the target is on
    goal: float
    at_most: bool = False  # the goal is a ceiling (latency), not a floor


TARGETS = [
    Target("HotpotQA first 100, `--route auto`: short-answer F1", "hotpot_auto", 100, "f1", 0.45),
    Target("HotpotQA first 100, `--route auto`: answer contained", "hotpot_auto", 100, "contained", 0.50),
    Target("HotpotQA first 100, `--route auto`: refused", "hotpot_auto", 100, "refused", 0.15, at_most=True),
    Target("SQuAD dev 200 (seed 0): F1", "squad", 200, "f1", 0.70),
    Target("SQuAD dev 200 (seed 0): refused", "squad", 200, "refused", 0.08, at_most=True),
    Target("CMRC 2018 trial 200 (seed 0): char-F1", "cmrc", 199, "f1", 0.65),
    Target("RGB zh_refine first 100, negatives: rejection", "rgb_negative", 100, "refused", 0.60),
    Target("RGB zh_refine first 100, positives + noise: accuracy", "rgb_noise", 100, "contained", 0.92),
    # the run under the default since session 27 (auto: the fitted verifier with the local model)
    Target("follow-ups (42 conversations): turn 2 correct", "follow_ups_auto", 42, "correct", 0.90),
]


def _rows(run: str) -> tuple[list[dict[str, Any]], str] | None:
    """(per-question rows, the file read) of ``run``: the partial file of a run under way (it will
    replace the finished JSON when it ends), else the finished JSON."""
    stem = run if run.startswith("follow_ups") else f"qa_{run}"
    final, partial = RESULTS / f"{stem}.json", PARTIALS / f"{stem}.partial.jsonl"
    if partial.is_file():
        lines = partial.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()], partial.name
    if final.is_file():
        return json.loads(final.read_text(encoding="utf-8"))["results"], final.name
    return None


def figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Means over the rows: QA results (f1, contained, refused, calls, latency) or follow-up turns."""
    if rows and "turn2" in rows[0]:
        return {"correct": statistics.mean(float(r["correct"]) for r in rows)}
    return {
        "f1": statistics.mean(r["f1"] for r in rows),
        "contained": statistics.mean(float(r["contained"]) for r in rows),
        "refused": statistics.mean(float(r["refused"]) for r in rows),
        "llm_calls": statistics.mean(r["llm_calls"] for r in rows),
        "latency_p50_s": statistics.median(r["total_ms"] for r in rows) / 1000,
    }


def table(latency_file: str | None) -> list[dict[str, Any]]:
    out = []
    for target in TARGETS:
        found = _rows(target.run)
        row: dict[str, Any] = {"target": target.label, "goal": target.goal, "source": None, "value": None}
        if found:
            rows, source = found
            value = figures(rows)[target.measure]
            met = value <= target.goal if target.at_most else value >= target.goal
            row |= {"source": source, "questions": len(rows), "of": target.size, "value": round(value, 4)}
            row["status"] = ("met" if met else "missed") if len(rows) >= target.size else "partial"
        out.append(row)
    if latency_file:
        rows = json.loads((RESULTS / latency_file).read_text(encoding="utf-8"))["results"]
        measured = figures(rows)
        for label, key, goal in (("single-route latency p50, s", "latency_p50_s", 6.0),
                                 ("single-route LLM calls per question", "llm_calls", 2.6)):  # fmt: skip
            value = measured[key]
            out.append({
                "target": label, "goal": goal, "source": latency_file, "questions": len(rows),
                "of": len(rows), "value": round(value, 3), "status": "met" if value <= goal else "missed",
            })  # fmt: skip
    return out


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| target | goal | measured | questions | status | file |", "|---|---|---|---|---|---|"]
    for r in rows:
        if r["source"] is None:
            lines.append(f"| {r['target']} | {r['goal']} | — | — | not run | — |")
            continue
        lines.append(
            f"| {r['target']} | {r['goal']} | {r['value']:.3f} | {r['questions']} of {r['of']} | "
            f"{r['status']} | `{r['source']}` |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--latency", default=None, help="a single-route run on an idle machine, under bench/results"
    )
    args = parser.parse_args(argv)
    rows = table(args.latency)
    (RESULTS / "targets.json").write_text(
        json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
