"""The ablation bench (issue 22, item 2): each answer check switched off in turn, on the mixed set's
report split, paired against the same questions with every check on.

    .venv/bin/python -m bench.ablation --limit 120            # runs what is missing, then compares
    .venv/bin/python -m bench.ablation --limit 120 --only constraints,support
    .venv/bin/python -m bench.ablation --limit 120 --compare  # only the comparison of finished runs

Each condition is one ``bench.mixed_set`` run (``--set graph.checks_off=[...]``, tag
``ablation<limit>_<condition>``), resumable question by question; the baseline is tagged ``..._none``
so that every condition answers exactly the same questions. The comparison, saved as
``bench/results/ablation_report_<limit>.json``: per check, outcome accuracy with and without it,
questions it wins and loses (a right outcome only with the check / only without it), the exact McNemar
p-value of that split, refusals of answerable questions, answers to unanswerable ones, and LLM calls.
A check whose removal loses nothing on these held-out questions has not earned its place.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.qa_compare import mcnemar_exact  # noqa: E402
from core.vocabulary import ANSWER_CHECK_NAMES  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def run_name(split: str, limit: int, condition: str) -> str:
    return f"mixed_{split}_ablation{limit}_{condition}"


def run_condition(split: str, limit: int, condition: str) -> None:
    off = [] if condition == "none" else [condition]
    command = [
        sys.executable, "-m", "bench.mixed_set", "--split", split, "--limit", str(limit), "--resume",
        "--tag", f"ablation{limit}_{condition}", "--set", f"graph.checks_off={json.dumps(off)}",
    ]  # fmt: skip
    print(f"== {condition}: {' '.join(command[1:])}", flush=True)
    subprocess.run(command, cwd=ROOT, check=True)


def rows(split: str, limit: int, condition: str) -> dict[str, dict[str, Any]] | None:
    path = RESULTS / f"{run_name(split, limit, condition)}.json"
    if not path.is_file():
        return None
    return {r["qid"]: r for r in json.loads(path.read_text(encoding="utf-8"))["results"]}


def effect(base: dict[str, dict[str, Any]], off: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the check does: the baseline has it, ``off`` does not (same questions)."""
    shared = sorted(set(base) & set(off))
    won = [q for q in shared if base[q]["outcome_correct"] and not off[q]["outcome_correct"]]
    lost = [q for q in shared if off[q]["outcome_correct"] and not base[q]["outcome_correct"]]

    def share(table: dict[str, dict[str, Any]], keep: Any) -> int:
        return sum(1 for q in shared if keep(table[q]))

    return {
        "questions": len(shared),
        "outcome_with_check": round(share(base, lambda r: r["outcome_correct"]) / len(shared), 4),
        "outcome_without": round(share(off, lambda r: r["outcome_correct"]) / len(shared), 4),
        "won_by_the_check": len(won),
        "lost_to_the_check": len(lost),
        "mcnemar_p": round(mcnemar_exact(len(won), len(lost)), 4),
        "answerable_refused_with": share(base, lambda r: r["answerable"] and r["refused"]),
        "answerable_refused_without": share(off, lambda r: r["answerable"] and r["refused"]),
        "unanswerable_answered_with": share(base, lambda r: not r["answerable"] and not r["refused"]),
        "unanswerable_answered_without": share(off, lambda r: not r["answerable"] and not r["refused"]),
        "llm_calls_with": round(sum(base[q]["llm_calls"] for q in shared) / len(shared), 2),
        "llm_calls_without": round(sum(off[q]["llm_calls"] for q in shared) / len(shared), 2),
        "won": won,
        "lost": lost,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="report", choices=("calibration", "report"))
    parser.add_argument("--limit", type=int, required=True)
    parser.add_argument("--only", default="", help="comma-separated checks (default: all)")
    parser.add_argument("--compare", action="store_true", help="compare finished runs only")
    args = parser.parse_args()
    checks = [c for c in ANSWER_CHECK_NAMES if not args.only or c in args.only.split(",")]
    if not args.compare:
        for condition in ["none", *checks]:
            if rows(args.split, args.limit, condition) is None:
                run_condition(args.split, args.limit, condition)
    base = rows(args.split, args.limit, "none")
    if base is None:
        sys.exit("the baseline run (every check on) has not finished")
    table = {c: effect(base, found) for c in checks if (found := rows(args.split, args.limit, c)) is not None}
    report = {
        "split": args.split,
        "questions": len(base),
        "checks": table,
        "command": " ".join(["python -m bench.ablation", *sys.argv[1:]]),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }
    out = RESULTS / f"ablation_{args.split}_{args.limit}.json"
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {c: {k: v for k, v in e.items() if k not in ("won", "lost")} for c, e in table.items()}, indent=1
        )
    )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
