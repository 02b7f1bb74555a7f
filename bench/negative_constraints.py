"""Calibrate the constraint check (``graphs/rag/nodes/_constraints.py``) on RGB zh_refine questions 100–299.

The report split is the first 100 questions (``bench.qa``'s rgb runs), so nothing here reads them.

For every calibration question that names a constraint (a year, an ordinal such as 第七届):
- **positives**: is the gold answer stated near the constraint in the question's positive passages,
  for each window (sentences either side of the one stating the answer; ``None`` = anywhere in the
  passage)? A window that misses it would refuse an answerable question.
- **negatives**: every figure written in the negative passages ("4000万", "6.4%") stands in for an
  answer read from them: the share the check would let through, per window. And: does some negative
  passage hold the constraint at all? Where none does, any answer drawn from them fails the check.

    .venv/bin/python -m bench.negative_constraints     # saves bench/results/negative_constraints.json
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.eval.datasets import rgb_answer_groups  # noqa: E402
from agent.eval.shared_data import shared_data_dir  # noqa: E402
from graphs.rag.inspection import CONSTRAINT_WINDOW, question_constraints, unmet_constraints  # noqa: E402

DATA = shared_data_dir() / "rgb" / "zh_refine.json"
OUT = ROOT / "bench" / "results" / "negative_constraints.json"
CALIBRATION = range(100, 300)
WINDOWS: list[int | None] = [0, 1, 2, 3, None]
NUMBER_WITH_UNIT = re.compile(r"(?<![\d.])\d+(?:\.\d+)?[^\s\d，。,.、；;：:）)]")


def gold_met(
    aliases: list[str], constraints: list[str], passages: list[str], window: int | None
) -> bool | None:
    """True/False: the constraint is (not) near a sentence stating the answer; None: no sentence states it."""
    stated = [p for p in passages if any(a and a in p for a in aliases)]
    if not stated:
        return None
    if window is None:
        return any(all(c in p for c in constraints) for p in stated)
    return any(not unmet_constraints(alias, constraints, stated, window) for alias in aliases if alias)


def negative_spans_passing(
    with_constraints: list[tuple[dict[str, Any], list[str]]], window: int | None
) -> tuple[int, int]:
    """Every figure written in the negatives (a number and the character after it, "4000万"), as a
    stand-in for an answer read from them: how many of them the check would let through."""
    passing = spans = 0
    for q, constraints in with_constraints:
        figures = {m.group(0) for p in q["negative"] for m in NUMBER_WITH_UNIT.finditer(p)}
        figures -= set(constraints)
        for figure in figures:
            spans += 1
            stated = [p for p in q["negative"] if figure in p]
            passing += bool(gold_met([figure], constraints, stated, window))
    return passing, spans


def main() -> None:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [rows[i] for i in CALIBRATION]
    with_constraints = [(q, question_constraints(q["query"])) for q in questions]
    with_constraints = [(q, c) for q, c in with_constraints if c]
    per_window: dict[str, dict[str, Any]] = {}
    for window in WINDOWS:
        met = unmet = unstated = 0
        for q, constraints in with_constraints:
            aliases = rgb_answer_groups(q["answer"])[0]
            result = gold_met(aliases, constraints, q["positive"], window)
            if result is None:
                unstated += 1
            elif result:
                met += 1
            else:
                unmet += 1
        judged = met + unmet
        passing, spans = negative_spans_passing(with_constraints, window)
        per_window["passage" if window is None else str(window)] = {
            "positives_kept": round(met / judged, 4) if judged else None,
            "negative_number_spans_passing": round(passing / spans, 4) if spans else None,
            "positives_refused": unmet,
            "positives_judged": judged,
            "gold_not_found_verbatim": unstated,
        }
    negatives_without = sum(
        1
        for q, constraints in with_constraints
        if not any(all(c in p for c in constraints) for p in q["negative"])
    )
    report = {
        "dataset": str(DATA.relative_to(ROOT.parent)),
        "calibration_questions": f"{CALIBRATION.start}-{CALIBRATION.stop - 1}",
        "questions": len(questions),
        "with_constraints": len(with_constraints),
        "per_window": per_window,
        "negatives_lacking_the_constraint_everywhere": round(negatives_without / len(with_constraints), 4),
        "chosen_window": CONSTRAINT_WINDOW,
        "load_average": os.getloadavg(),
        "command": "python -m bench.negative_constraints",
    }
    OUT.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
