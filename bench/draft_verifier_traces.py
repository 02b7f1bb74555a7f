"""Refit the draft verifier on the drafts the benchmark runs already traced, and check it on datasets and
questions it was not fitted on (issue 22, item 4).

The fitted verifier (``graphs/rag/models/draft_verifier.json``, ``graph.support_verifier = "features"``)
was fitted on 76 drafts. Every ``bench.qa`` run traces each ``check_support`` with the features it read,
so the target runs hold several hundred more drafts, in both languages, labelled by their gold answers.

``--harvest`` reads the traces (``.ragpilot-bench/traces``) and the result files that hold the golds, and
keeps one row per question: its dataset, whether it is answerable, and each check's features, the
checks that failed other than the verifier, and whether the draft contains a gold answer (a draft to
an RGB negative is always wrong). The rows go to ``bench/results/draft_verifier_traces.jsonl``: features
and labels, no passages.

The evaluation replays each question under a verifier: walking its recorded checks, the first one the
verifier keeps and no other check failed is the answer (right when its draft was); a check the
recorded run kept but the replayed verifier rejects leads to a refusal (the retry that follows mostly
writes the same draft, which the same verifier rejects again); a question with no check keeps its
recorded outcome. Outcome: a right answer to an answerable question, or a refusal of an unanswerable
one. The objective gives each dataset the same weight (the mean of its outcome accuracies), fixed
before any refit was run, so that the one negative set weighs as much as each answerable one.

Two checks of transfer, both fixed before any refit was read:
- ``split``: every dataset's questions halved by a hash of the question; fitted and cut on one half,
  figures on the other;
- ``leave_one_out``: for each answerable dataset, fitted and cut on the others (the negatives
  included), figures on it.

    .venv/bin/python -m bench.draft_verifier_traces --harvest     # after bench.qa runs
    .venv/bin/python -m bench.draft_verifier_traces [--save]      # --save writes the split's model
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.eval.answer_metrics import answer_contained  # noqa: E402
from bench.draft_classifier import Logistic  # noqa: E402
from bench.partials import RESULTS, save_result  # noqa: E402
from graphs.rag.nodes.draft_verifier import (  # noqa: E402
    DRAFT_VERIFIER_PATH,
    load_draft_verifier,
    model_inputs,
    probability_right,
)

TRACES = ROOT / ".ragpilot-bench" / "traces"
ROWS = RESULTS / "draft_verifier_traces.jsonl"
# Corpus folder of each bench.qa dataset → the result files that hold its questions' golds.
DATASETS: dict[str, tuple[str, list[str]]] = {
    "qa_squad_dev_v1": ("squad", ["qa_squad.json"]),
    "qa_squad_cmrc2018_trial_s2tw": ("cmrc_traditional", [
        "traditional_chinese_s30_answer_words_on.json", "traditional_chinese_users_script.json",
        "traditional_chinese_session23.json", "traditional_chinese_baseline.json"]),
    "qa_squad_cmrc2018_trial": ("cmrc", ["qa_cmrc.json"]),
    "qa_rgb_zh_refine_neg": ("rgb_negative", [
        "qa_rgb_negative.json", "qa_rgb_negative_fresh100to149_answer_words_on.json",
        "qa_rgb_negative_fresh100to149_answer_words_off.json"]),
    "qa_rgb_zh_refine": ("rgb_positive", ["qa_rgb_noise.json"]),
}  # fmt: skip
FEATURE_SETS = {
    "shipped_columns": ["best_share", "log_p_not_found", "cited_rerank", "uncited", "chinese"],
    "with_top_rerank": ["best_share", "log_p_not_found", "cited_rerank", "uncited", "chinese", "top_rerank"],
}


def dataset_of(trace: list[dict[str, Any]]) -> str | None:
    """The dataset whose corpus the run searched (the longest matching folder name wins)."""
    for event in trace:
        if event.get("node") == "retrieve":
            for hit in event["decision"].get("hits") or []:
                folder = hit.get("source", "").split("/qa/")[-1].split("/")[0]
                for prefix in sorted(DATASETS, key=len, reverse=True):
                    if folder.startswith(prefix + "_"):
                        return DATASETS[prefix][0]
    return None


def golds() -> dict[str, dict[str, Any]]:
    """Each dataset's question → (answer groups, language), from its result files."""
    found: dict[str, dict[str, Any]] = defaultdict(dict)
    for name, files in DATASETS.values():
        for file in files:
            path = RESULTS / file
            if path.is_file():
                for r in json.loads(path.read_text("utf-8"))["results"]:
                    found[name].setdefault(r["question"], (r["gold"], r["language"]))
    return found


def harvest() -> list[dict[str, Any]]:
    answers = golds()
    latest: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    for path in sorted(TRACES.glob("*.jsonl")):
        trace = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
        run = next((e for e in trace if e["type"] == "run"), None)
        dataset = dataset_of(trace)
        if run is None or dataset is None or run["question"] not in answers[dataset]:
            continue
        gold, language = answers[dataset][run["question"]]
        checks = []
        for e in trace:
            decision = e.get("decision") or {}
            if e.get("node") != "check_support" or "features" not in decision:
                continue
            draft = " ".join(v["sentence"] for v in decision.get("verdicts") or [])
            others = [
                c["check"] for c in decision.get("failed_checks") or [] if c["check"] != "unlikely_draft"
            ]
            right = dataset != "rgb_negative" and answer_contained(draft, gold, language)
            checks.append(
                {
                    "features": decision["features"],
                    "kept": decision.get("kept"),
                    "others": others,
                    "right": right,
                }
            )
        final = next((e["answer"] for e in trace if e["type"] == "answer"), None)
        if final is None:
            continue
        row = {
            "dataset": dataset,
            "question": run["question"],
            "answerable": dataset != "rgb_negative",
            "refused": bool(final.get("refused")),
            "answer_right": dataset != "rgb_negative"
            and answer_contained(final.get("answer") or "", gold, language),
            "checks": checks,
        }
        key = (dataset, run["question"])
        if key not in latest or run["started_at"] > latest[key][0]:
            latest[key] = (run["started_at"], row)
    return [row for _, row in sorted(latest.values(), key=lambda x: (x[1]["dataset"], x[1]["question"]))]


def columns(features: dict[str, Any]) -> dict[str, float]:
    return {**model_inputs(features), "top_rerank": float(features.get("top_rerank") or 0.0)}


def replay(row: dict[str, Any], keeps: Any) -> tuple[bool, bool]:
    """The question under a verifier (``keeps(features) -> bool``), as the docstring tells: whether it
    ends with an answer (right or wrong) rather than a refusal, and whether its outcome is correct."""
    for check in row["checks"]:
        if keeps(check["features"]) and not check["others"]:
            return True, bool(check["right"]) and row["answerable"]
        if check["kept"] and not check["others"]:
            return False, not row["answerable"]  # the recorded run stopped here; the replayed one refuses
    if not row["checks"]:
        return not row["refused"], row["answer_right"] if row["answerable"] else row["refused"]
    return False, not row["answerable"]


def by_dataset(rows: list[dict[str, Any]], keeps: Any) -> dict[str, Any]:
    groups: dict[str, list[bool]] = defaultdict(list)
    refused: dict[str, int] = defaultdict(int)
    for row in rows:
        answered, correct = replay(row, keeps)
        groups[row["dataset"]].append(correct)
        refused[row["dataset"]] += row["answerable"] and not correct and not answered
    figures = {d: {"questions": len(v), "outcome_correct": sum(v), "accuracy": round(sum(v) / len(v), 3),
                   "answerable_refused": refused[d]} for d, v in sorted(groups.items())}  # fmt: skip
    figures["macro_accuracy"] = round(sum(f["accuracy"] for f in figures.values()) / len(groups), 4)
    return figures


def drafts(rows: list[dict[str, Any]]) -> tuple[list[dict[str, float]], list[bool]]:
    found = [(columns(c["features"]), bool(c["right"])) for r in rows for c in r["checks"]]
    return [f for f, _ in found], [label for _, label in found]


def fit(rows: list[dict[str, Any]], names: list[str]) -> tuple[Logistic, float]:
    """A logistic regression on these rows' drafts, and the cut-off with the best macro outcome on them
    (ties: the lowest, which refuses least)."""
    x, y = drafts(rows)
    model = Logistic(names).fit(x, y)
    cuts = sorted({round(model.predict(f), 4) for f in x} | {0.0})
    best = max(
        cuts, key=lambda c: (by_dataset(rows, lambda f: model.predict(columns(f)) >= c)["macro_accuracy"], -c)
    )
    return model, best


def shipped_keeps(features: dict[str, Any]) -> bool:
    model = load_draft_verifier()
    return probability_right(features, model) >= float(model["cut"])


def half(question: str) -> str:
    return "calibration" if hashlib.sha256(question.encode()).digest()[0] % 2 == 0 else "report"


def evaluate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    split = {s: [r for r in rows if half(r["question"]) == s] for s in ("calibration", "report")}
    out: dict[str, Any] = {"split": {"shipped": by_dataset(split["report"], shipped_keeps),
                                     "accept_all": by_dataset(split["report"], lambda f: True)}}  # fmt: skip
    for name, names in FEATURE_SETS.items():
        model, cut = fit(split["calibration"], names)
        out["split"][name] = {
            **by_dataset(split["report"], lambda f, m=model, c=cut: m.predict(columns(f)) >= c),
            "model": {**model.describe(), "cut": cut},
        }
    out["leave_one_out"] = {}
    for held in sorted({r["dataset"] for r in rows if r["answerable"]}):
        others = [r for r in rows if r["dataset"] != held]
        mine = [r for r in rows if r["dataset"] == held]
        entry = {
            "shipped": by_dataset(mine, shipped_keeps)[held],
            "accept_all": by_dataset(mine, lambda f: True)[held],
        }
        for name, names in FEATURE_SETS.items():
            model, cut = fit(others, names)
            entry[name] = {
                **by_dataset(mine, lambda f, m=model, c=cut: m.predict(columns(f)) >= c)[held],
                "cut": cut,
            }
        out["leave_one_out"][held] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--harvest", action="store_true", help="rebuild the rows from the traces first")
    parser.add_argument("--save", metavar="FEATURE_SET", choices=sorted(FEATURE_SETS),
                        help="write that feature set's model, fitted on the calibration half, as the shipped verifier")  # fmt: skip
    args = parser.parse_args()
    if args.harvest:
        rows = harvest()
        ROWS.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    rows = [json.loads(line) for line in ROWS.read_text("utf-8").splitlines() if line.strip()]
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r["dataset"]] += 1
    _, labels = drafts(rows)
    result = {
        "questions": dict(counts),
        "drafts": len(labels),
        "right_drafts": sum(labels),
        **evaluate(rows),
        "load_average": os.getloadavg(),
        "command": "python -m bench.draft_verifier_traces " + " ".join(sys.argv[1:]),
    }
    save_result("draft_verifier_traces.json", result)
    print(
        json.dumps({k: v for k, v in result.items() if k != "command"}, indent=1, ensure_ascii=False)[:6000]
    )
    if args.save:
        chosen = result["split"][args.save]
        model = {
            **{k: v for k, v in chosen["model"].items() if k != "cut"},
            "cut": chosen["model"]["cut"],
            "fitted_on": f"bench.draft_verifier_traces: the calibration half of {len(rows)} traced bench.qa questions",
            "report": {k: v for k, v in chosen.items() if k != "model"},
            "shipped_before_on_the_same_report_half": result["split"]["shipped"],
        }
        DRAFT_VERIFIER_PATH.write_text(json.dumps(model, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
