"""A verifier fitted on cheap features of the draft, the way the router and the offline reranker were
fitted (issue 22, item 4): does it keep more right drafts and refuse more wrong ones than the JSON judge?

Reads the drafts ``bench.verifier_set`` captured (``--seed``; each labelled right when it contains a gold
answer of an answerable question). Feature sets were fixed before any draft was read:

- ``judge``: the judge's decision alone (a sentence survives the judge and the code checks);
- ``cheap``: the judge's decision and its "answers the question", the best sentence's word share with its
  cited passages (titles included), the judge's short answer stated in a cited passage, the reader's
  first-token P(NOT_FOUND) (log), the best cited passage's rerank score, Chinese or not;
- ``no_judge``: the same without anything the judge call gives (word share, P(NOT_FOUND), rerank score,
  uncited sentences, Chinese): a verifier that would save the judge's call;
- ``cheap_p_yes``: ``cheap`` and the best sentence's P(yes) (one more call per sentence).

Each is an L2-regularised logistic regression on standardised features (numpy, Newton steps), fitted on
the calibration split's drafts; a draft is kept when P(right) reaches the cut-off that gives the best
outcome on the calibration split. Figures on the report split's drafts, which nothing was fitted on.

    .venv/bin/python -m bench.draft_classifier --seed 1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.verifier_set import RESULTS, best_p, load  # noqa: E402
from graphs.rag.nodes.draft_verifier import DRAFT_VERIFIER_PATH, model_inputs  # noqa: E402

L2 = 1.0  # fixed before fitting: standardised features, a few dozen drafts


def features(item: dict[str, Any]) -> dict[str, float]:
    """Every candidate feature of one captured draft; the no-call ones read as the graph reads them."""
    return {
        **model_inputs({**item, "chinese": item["language"] == "zh"}),
        "judge_keeps": float(item["judge_keeps"]),
        "answers_question": float(bool(item.get("answers_question"))),
        "code_backed": float(bool(item["code_backed"])),
        "p_yes": best_p(item),
    }


FEATURE_SETS: dict[str, list[str]] = {
    "judge": ["judge_keeps"],
    "cheap": ["judge_keeps", "answers_question", "best_share", "code_backed", "log_p_not_found", "cited_rerank", "chinese"],
    "no_judge": ["best_share", "log_p_not_found", "cited_rerank", "uncited", "chinese"],
    "cheap_p_yes": ["judge_keeps", "answers_question", "best_share", "code_backed", "log_p_not_found", "cited_rerank", "chinese", "p_yes"],
}  # fmt: skip


class Logistic:
    """L2-regularised logistic regression on standardised columns; the intercept is not penalised."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def fit(self, rows: list[dict[str, float]], labels: list[bool]) -> Logistic:
        x = np.array([[r[n] for n in self.names] for r in rows], dtype=float)
        self.mean, self.scale = x.mean(axis=0), x.std(axis=0)
        self.scale[self.scale == 0] = 1.0
        z = np.hstack([np.ones((len(x), 1)), (x - self.mean) / self.scale])
        y = np.array(labels, dtype=float)
        w = np.zeros(z.shape[1])
        penalty = np.eye(z.shape[1]) * L2
        penalty[0, 0] = 0.0
        for _ in range(50):
            p = 1 / (1 + np.exp(-z @ w))
            gradient = z.T @ (p - y) + penalty @ w
            hessian = (z.T * (p * (1 - p))) @ z + penalty
            step = np.linalg.solve(hessian, gradient)
            w -= step
            if np.abs(step).max() < 1e-8:
                break
        self.weights = w
        return self

    def predict(self, row: dict[str, float]) -> float:
        x = (np.array([row[n] for n in self.names]) - self.mean) / self.scale
        return float(1 / (1 + np.exp(-(self.weights[0] + x @ self.weights[1:]))))

    def describe(self) -> dict[str, Any]:
        return {
            "intercept": round(float(self.weights[0]), 4),
            "weights_per_sd": {
                n: round(float(w), 4) for n, w in zip(self.names, self.weights[1:], strict=True)
            },
            "mean": {n: round(float(m), 4) for n, m in zip(self.names, self.mean, strict=True)},
            "sd": {n: round(float(s), 4) for n, s in zip(self.names, self.scale, strict=True)},
        }


def outcome(items: list[dict[str, Any]], kept: dict[str, bool]) -> dict[str, Any]:
    """Right drafts kept, wrong drafts refused, and outcome accuracy over every question (a question
    without a draft keeps the default's outcome: right only when unanswerable and refused)."""
    drafted = [i for i in items if "right" in i]
    rights = [i for i in drafted if i["right"]]
    wrongs = [i for i in drafted if not i["right"]]
    correct = sum(kept[i["qid"]] for i in rights)
    correct += sum(1 for i in wrongs if not i["answerable"] and not kept[i["qid"]])
    correct += sum(1 for i in items if "right" not in i and not i["answerable"] and i["default_refused"])
    return {
        "right_drafts_kept": [sum(kept[i["qid"]] for i in rights), len(rights)],
        "wrong_drafts_refused": [sum(not kept[i["qid"]] for i in wrongs), len(wrongs)],
        "unanswerable_drafts_refused": [
            sum(not kept[i["qid"]] for i in wrongs if not i["answerable"]),
            sum(1 for i in wrongs if not i["answerable"]),
        ],
        "outcome_correct": correct,
        "outcome_accuracy": round(correct / len(items), 3) if items else None,
    }


def best_cut(items: list[dict[str, Any]], scores: dict[str, float]) -> float:
    """The cut-off with the best outcome on these items (ties: the lowest, which refuses least)."""
    cuts = sorted({scores[q] for q in scores} | {0.0})
    return max(
        cuts, key=lambda c: (outcome(items, {q: s >= c for q, s in scores.items()})["outcome_correct"], -c)
    )


def evaluate(calibration: list[dict[str, Any]], report: list[dict[str, Any]]) -> dict[str, Any]:
    fit_on = [i for i in calibration if "right" in i]
    out: dict[str, Any] = {}
    for name, columns in FEATURE_SETS.items():
        model = Logistic(columns).fit([features(i) for i in fit_on], [i["right"] for i in fit_on])
        cal_scores = {i["qid"]: model.predict(features(i)) for i in fit_on}
        cut = best_cut(calibration, cal_scores)
        rep_scores = {i["qid"]: model.predict(features(i)) for i in report if "right" in i}
        out[name] = {
            "model": model.describe(),
            "cut": round(cut, 4),
            "calibration": outcome(calibration, {q: s >= cut for q, s in cal_scores.items()}),
            "report": outcome(report, {q: s >= cut for q, s in rep_scores.items()}),
            "report_kept": {q: s >= cut for q, s in rep_scores.items()},
        }
    drafted = [i for i in report if "right" in i]
    out["judge_as_is"] = {"report": outcome(report, {i["qid"]: bool(i["judge_keeps"]) for i in drafted})}
    out["accept_all"] = {"report": outcome(report, {i["qid"]: True for i in drafted})}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--save",
        action="store_true",
        help="write the no_judge model to graphs/rag/models/draft_verifier.json (graph.support_verifier)",
    )
    args = parser.parse_args()
    calibration, report = load("calibration", args.seed), load("report", args.seed)
    saved = {
        "seed": args.seed,
        "l2": L2,
        "questions": {"calibration": len(calibration), "report": len(report)},
        "drafts": {
            "calibration": sum("right" in i for i in calibration),
            "report": sum("right" in i for i in report),
        },
        "verifiers": evaluate(calibration, report),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"draft_classifier_seed{args.seed}.json"
    path.write_text(json.dumps(saved, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.save:
        chosen = saved["verifiers"]["no_judge"]
        model = {
            **chosen["model"],
            "cut": chosen["cut"],
            "fitted_on": f"bench.draft_classifier --seed {args.seed}: {saved['drafts']['calibration']} "
            "calibration drafts of the local reader and the offline reranker",
            "report": chosen["report"],
            "judge_on_the_same_report_drafts": saved["verifiers"]["judge_as_is"]["report"],
        }
        DRAFT_VERIFIER_PATH.parent.mkdir(parents=True, exist_ok=True)
        DRAFT_VERIFIER_PATH.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
    for name, figures in saved["verifiers"].items():
        print(name, figures.get("cut"), "cal", figures.get("calibration"), "\n   report", figures["report"])


if __name__ == "__main__":
    main()
