"""Why did a QA run refuse? Replay the retrieval of every refused question and look for the gold answer.

Run from the repository root, after ``bench.qa`` has saved the run:

    .venv/bin/python -m bench.qa_refusals squad      # reads bench/results/qa_squad.json

For each refused question the graph's retrieval runs again (hybrid search, offline rerank, the
knowledge base ``bench.qa`` built) and we record whether a retrieved passage contains a gold answer,
at which rank, and the best rerank score. A refusal with the answer on the page is a false refusal;
which step made it (``crag_action``: ``refuse`` = CRAG graded every passage below ``crag_lower``)
says where to look. Saves ``bench/results/qa_<run>_refusals.json``.

``--rerun`` then asks the questions CRAG refused (``crag_action == "refuse"``) again through the whole
agent with the current settings (e.g. after recalibrating ``graph.crag_lower``) and reports how many
are still refused and how many answers now contain the gold answer. It measures those questions
only: the other questions' results are those of the saved run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.qa import DATA, RESULTS, RUNS, saved_limit  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", choices=sorted(RUNS), help="the bench.qa run whose refusals to replay")
    parser.add_argument("--home", type=Path, default=REPO / ".ragpilot-bench")
    parser.add_argument("--rerun", action="store_true", help="ask CRAG's refusals again (current settings)")
    args = parser.parse_args(argv)

    from agent.eval.datasets import load_qa_dataset
    from agent.eval.qa import QAEvalConfig, QuestionResult, qa_settings, run_qa_eval
    from graphs.rag.nodes.retrieve import search_and_rerank
    from graphs.rag.resources import Resources
    from tools.knowledge_base.knowledge_base import KnowledgeBase

    spec = RUNS[args.run]
    saved = json.loads((RESULTS / f"qa_{args.run}.json").read_text(encoding="utf-8"))
    dataset = load_qa_dataset(
        DATA / spec["file"], spec["format"], limit=saved_limit(saved),
        sample_seed=spec.get("seed"), negative_only=spec.get("negative_only", False),
    )  # fmt: skip
    refused = {r["qid"]: r for r in saved["results"] if r["refused"]}
    settings = qa_settings(dataset, args.home)
    rows = []
    with KnowledgeBase.open(settings) as kb:
        resources = Resources(settings, knowledge_base=kb)
        for example in dataset.examples:
            if example.qid not in refused:
                continue
            hits, _ = search_and_rerank(
                resources, [example.question], [example.question], list(settings.user_groups), settings.search.top_k
            )  # fmt: skip
            golds = [g.lower() for group in example.answers for g in group]
            ranks = [i for i, h in enumerate(hits) if any(g in h.text.lower() for g in golds)]
            rows.append(
                {
                    "qid": example.qid,
                    "question": example.question,
                    "crag_action": refused[example.qid]["crag_action"],
                    "refusal_reason": refused[example.qid].get("refusal_reason"),
                    "gold_rank": ranks[0] if ranks else None,
                    "best_score": round(max((h.rerank_score or 0.0 for h in hits), default=0.0), 3),
                }
            )
    by_action: dict[str, dict[str, float]] = {}
    for action in sorted({str(r["crag_action"]) for r in rows}):
        group = [r for r in rows if str(r["crag_action"]) == action]
        by_action[action] = {
            "refused": len(group),
            "gold_retrieved": sum(r["gold_rank"] is not None for r in group),
            "gold_at_rank_1": sum(r["gold_rank"] == 0 for r in group),
            "best_score_median": statistics.median(r["best_score"] for r in group),
        }
    report = {
        "run": args.run,
        "questions": saved["questions"],
        "refused": len(rows),
        "replayed_with": {"crag_upper": settings.graph.crag_upper, "crag_lower": settings.graph.crag_lower},
        "by_crag_action": by_action,
        "refusal_reasons": dict(Counter(str(r["refusal_reason"]) for r in rows).most_common()),
        "rows": rows,
    }
    if args.rerun:
        again = {qid for qid, r in refused.items() if r["crag_action"] == "refuse"}
        config = QAEvalConfig(
            dataset=DATA / spec["file"], format=spec["format"], limit=saved_limit(saved),
            sample_seed=spec.get("seed"), route=spec["route"], negative_only=spec.get("negative_only", False),
        )  # fmt: skip
        done = [QuestionResult.model_validate(r) for r in saved["results"] if r["qid"] not in again]
        rerun: list[QuestionResult] = []
        run_qa_eval(config, settings, home=args.home, progress=False, on_result=rerun.append, done=done)
        report["rerun"] = {
            "questions": len(rerun),
            "crag_thresholds": {"upper": settings.graph.crag_upper, "lower": settings.graph.crag_lower},
            "still_refused": sum(r.refused for r in rerun),
            "contained": sum(r.contained for r in rerun),
            "f1_mean": round(statistics.fmean(r.f1 for r in rerun), 4) if rerun else 0.0,
            "crag_actions": dict(Counter(str(r.crag_action) for r in rerun).most_common()),
            "llm_calls_per_question": round(statistics.fmean(r.llm_calls for r in rerun), 2)
            if rerun
            else 0.0,
            "results": [r.model_dump(mode="json") for r in rerun],
        }
    out = RESULTS / f"qa_{args.run}_refusals.json"
    out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    shown = {k: v for k, v in report.items() if k != "rows"}
    if "rerun" in shown:
        shown["rerun"] = {k: v for k, v in shown["rerun"].items() if k != "results"}
    print(json.dumps(shown, ensure_ascii=False, indent=1))
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
