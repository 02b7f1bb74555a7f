"""Faithfulness of saved mixed-set runs, measured without a model (``agent/eval/faithfulness.py``): the
share of shown sentences whose cited passages hold their numbers and most of their words, per run, and
split by whether the question's outcome was right.

    .venv/bin/python -m bench.grounding bench/results/mixed_report_seed1_r160_default.json \
        bench/results/mixed_report_seed1_r160_features.json [--save grounding_r160.json]

Runs saved before results recorded their shown sentences (``shown_sentences``) have nothing to measure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.eval.datasets import QADataset  # noqa: E402
from agent.eval.faithfulness import ShownSentence, measure_grounding  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def run_grounding(run: dict[str, Any]) -> dict[str, Any]:
    dataset = QADataset.model_validate_json(Path(run["path"]).read_text(encoding="utf-8"))
    texts = {p.doc_id: (p.title, p.text) for p in dataset.passages}
    rows = [r for r in run["results"] if not r.get("error")]
    out: dict[str, Any] = {"questions": len(rows)}
    for name, chosen in (
        ("all", rows),
        ("outcome_right", [r for r in rows if r["outcome_correct"]]),
        ("outcome_wrong", [r for r in rows if not r["outcome_correct"]]),
    ):
        measured = measure_grounding(
            ([ShownSentence(**s) for s in r.get("shown_sentences") or []] for r in chosen), texts
        )
        out[name] = {"sentences": measured.sentences, "grounded": measured.grounded, "share": measured.share}
        if name == "all":
            out["ungrounded"] = measured.ungrounded
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--save", default="")
    args = parser.parse_args()
    report = {str(path): run_grounding(json.loads(path.read_text(encoding="utf-8"))) for path in args.runs}
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.save:
        (RESULTS / args.save).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
