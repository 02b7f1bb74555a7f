"""Two QA runs of the same questions, compared question by question (paired), with an exact McNemar test.

Run from the repository root:

    .venv/bin/python -m bench.qa_compare bench/results/qa_hotpot_single.json bench/results/qa_hotpot_iterative.json

For "answer contains the gold answer", "refused" and, on mixed-set runs, "outcome correct", counts the questions only A got, only B got,
and the exact two-sided McNemar p-value over those discordant pairs (a binomial test at 1/2), plus
the mean EM and F1 of each run over the shared questions and a sign test on F1. Either run may be a
``qa_<run>.partial.jsonl`` of a resumable run. Prints one JSON object; ``--save`` writes it.
"""

from __future__ import annotations

import argparse
import json
import sys
from math import comb
from pathlib import Path


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: the discordant pairs as a binomial at 1/2."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(a: dict[str, dict], b: dict[str, dict], field: str) -> dict[str, float]:
    shared = sorted(set(a) & set(b))
    only_a = sum(bool(a[q][field]) and not bool(b[q][field]) for q in shared)
    only_b = sum(bool(b[q][field]) and not bool(a[q][field]) for q in shared)
    return {
        "a": sum(bool(a[q][field]) for q in shared),
        "b": sum(bool(b[q][field]) for q in shared),
        "only_a": only_a,
        "only_b": only_b,
        "mcnemar_p": round(mcnemar_exact(only_a, only_b), 5),
    }


def load_results(path: Path) -> dict[str, dict]:
    """A saved run's per-question results by qid; a ``.partial.jsonl`` of a run still going (or
    interrupted) is read line by line, so a resumable run can be compared before it finishes."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        rows = json.loads(text)["results"]
    return {r["qid"]: r for r in rows}


def compare(path_a: Path, path_b: Path) -> dict:
    a, b = load_results(path_a), load_results(path_b)
    shared = sorted(set(a) & set(b))
    if not shared:
        return {"a": str(path_a), "b": str(path_b), "questions": 0}
    return {
        "a": str(path_a),
        "b": str(path_b),
        "questions": len(shared),
        "contained": paired(a, b, "contained"),
        "refused": paired(a, b, "refused"),
        "em_mean": {
            "a": round(sum(a[q]["em"] for q in shared) / len(shared), 4),
            "b": round(sum(b[q]["em"] for q in shared) / len(shared), 4),
        },
        "f1_mean": {
            "a": round(sum(a[q]["f1"] for q in shared) / len(shared), 4),
            "b": round(sum(b[q]["f1"] for q in shared) / len(shared), 4),
        },
        "f1_better": paired_better(a, b, shared, "f1"),
        # mixed-set runs: a right answer to an answerable question or a refusal of an unanswerable one
        **(
            {"outcome_correct": paired(a, b, "outcome_correct")}
            if all("outcome_correct" in a[q] and "outcome_correct" in b[q] for q in shared)
            else {}
        ),
    }


def paired_better(a: dict[str, dict], b: dict[str, dict], shared: list[str], field: str) -> dict[str, float]:
    """Questions where A scores higher than B and the reverse, with the exact sign-test p-value."""
    only_a = sum(a[q][field] > b[q][field] for q in shared)
    only_b = sum(b[q][field] > a[q][field] for q in shared)
    return {"a_higher": only_a, "b_higher": only_b, "sign_test_p": round(mcnemar_exact(only_a, only_b), 5)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--save", type=Path, help="write the comparison here as JSON")
    args = parser.parse_args(argv)
    report = compare(args.a, args.b)
    if not report["questions"]:
        print("the two runs share no question", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=1))
    if args.save:
        args.save.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
