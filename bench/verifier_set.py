"""Which answer verifier can a 1.5B model carry? Drafts labelled right or wrong, judged several ways (issue 22, item 4).

For each question of the mixed set's split, the graph runs with today's default; at its first
``check_support`` the state is captured: the draft, its passages, the JSON judge's verdicts (after the
code checks for uncited sentences and unstated numbers) and the short answer it proposed. A draft is
*right* when it contains a gold answer of an answerable question; every draft to an unanswerable
question is wrong. On that same state, the alternatives are asked there and then (the local model's
prompt cache still holds the passages):

- ``judge``: today's decision — the draft is kept when one sentence survives the JSON judge and the code checks;
- ``accept_all``: no verifier;
- ``p_yes``: one yes/no call per sentence (``prompts/answer_sentence_supported.md``: is it stated by the
  passages it cites, and does it answer the question?), P(yes) from one output token; the draft is
  kept when its best sentence reaches a cut-off calibrated on the calibration split;
- ``copy`` (items captured before session 18 only): the model copied the passage sentence stating the
  judge's short answer and code checked the copy; it rescued no draft and was removed with
  ``graph.quote_on_rejection``, so new captures no longer ask it;
- ``code``: the judge's short answer is stated in a passage the draft cites (``backed_short_answer``), no call;
- unions with the judge: kept when the judge keeps it or the other one does.

Items go to a partial file as they finish (resumable); the comparison is printed and saved to
``bench/results/verifier_set.json``.

    .venv/bin/python -m bench.verifier_set --split calibration --limit 40
    .venv/bin/python -m bench.verifier_set --split report --skip 100 --limit 50   # questions no ablation saw
    .venv/bin/python -m bench.verifier_set --compare      # both splits: cut-off on one, figures on the other
    .venv/bin/python -m bench.verifier_set --split report --paired bench/results/mixed_report_<tag>.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.partials import partial_path  # noqa: E402

# Public node modules only (the import contract); imported here, not in capture(), so that importing
# this module (as its tests do) fails when one of them stops providing a name.
from graphs.rag.nodes.check_answerable import probability_yes  # noqa: E402
from graphs.rag.nodes.check_support import confirmation_prompt  # noqa: E402
from graphs.rag.nodes.draft_verifier import draft_features  # noqa: E402
from graphs.rag.nodes.finalize_answer import backed_short_answer  # noqa: E402
from graphs.rag.nodes.generate_answer import RECORD_ONLY  # noqa: E402

RESULTS = ROOT / "bench" / "results"
HOME = ROOT / ".ragpilot-bench"
SEED = 0


def partial_name(split: str, seed: int) -> str:
    """Seed 0 keeps the name its first captures had."""
    return f"verifier_set_{split}" if seed == 0 else f"verifier_set_seed{seed}_{split}"


def cheap_features(judged: dict[str, Any], tokenize: Callable[[str], list[str]]) -> dict[str, Any]:
    """What a verifier can read without another LLM call (``nodes.draft_verifier.draft_features``), and
    whether the judge's short answer is stated in any passage of the context."""
    context = judged.get("context") or []
    short = judged.get("proposed_short_answer") or ""
    bodies = [f"{p.get('title') or ''}\n{p['text']}" for p in context]
    return {
        **draft_features(judged, tokenize),
        "backed_anywhere": bool(short) and bool(backed_short_answer(short, bodies, tokenize)),
    }


def capture(split: str, limit: int, skip: int, seed: int = SEED) -> None:
    """Run the split's questions ``skip`` to ``skip + limit`` and record each draft with every verifier's view.

    The reader's first-token P(NOT_FOUND) is recorded by a bound too small to mask anything
    (``graph.not_found_min_probability``): greedy decoding decides as in the default."""
    from agent.eval.answer_metrics import answer_contained
    from agent.eval.datasets import load_qa_dataset
    from agent.eval.qa import qa_settings, write_corpus
    from agent.run_loop import turn_request
    from graphs.rag.graph import build_graph
    from graphs.rag.resources import Resources
    from tools.knowledge_base.ingest import ingest
    from tools.knowledge_base.knowledge_base import KnowledgeBase
    from tools.knowledge_base.sparse import tokenize

    path = HOME / "mixed" / f"mixed_seed{seed}_{split}.json"
    if not path.is_file():
        sys.exit(f"{path} is missing: run python -m bench.mixed_set --split {split} once to build it")
    dataset = load_qa_dataset(path, "mixed", limit=skip + limit)
    settings = qa_settings(dataset, HOME, graph={"not_found_min_probability": RECORD_ONLY})
    partial = partial_path(partial_name(split, seed))
    done = (
        {json.loads(line)["qid"] for line in partial.read_text().splitlines()} if partial.is_file() else set()
    )
    corpus = write_corpus(dataset, settings.home / "qa" / settings.qdrant.collection)
    with KnowledgeBase.open(settings) as kb:
        ingest([corpus], settings, prune=True, progress=False, kb=kb)
        resources = Resources(settings, knowledge_base=kb)
        graph = build_graph(settings, resources=resources)
        llm = resources.llm
        for example in dataset.examples[skip:]:
            if example.qid in done:
                continue
            started = time.perf_counter()
            graph_input, config, context = turn_request(settings, example.question)
            judged: dict[str, Any] | None = None
            final: Any = {}
            for mode, chunk in graph.stream(
                graph_input, config, context=context, stream_mode=["updates", "values"]
            ):
                if mode == "values":
                    final = chunk
                    if (
                        judged is None
                        and final.get("steps")
                        and final["steps"][-1]["node"] == "check_support"
                    ):
                        judged = dict(final)
            item: dict[str, Any] = {
                "qid": example.qid, "question": example.question, "language": example.language,
                "kind": example.kind, "answerable": example.answerable, "gold": example.answers,
                "route": final.get("route"), "default_refused": bool(final.get("refused")),
                "default_answer": final.get("answer", ""), "run_seconds": round(time.perf_counter() - started, 1),
            }  # fmt: skip
            if judged is not None:
                draft = judged.get("answer_draft") or ""
                passages = {p["n"]: p["text"] for p in judged.get("context") or []}
                verdicts = judged.get("support") or []
                short = judged.get("proposed_short_answer") or ""
                question = judged["standalone_question"]
                right = example.answerable and answer_contained(draft, example.answers, example.language)
                p_yes: list[float | None] = []
                t0 = time.perf_counter()
                for verdict in verdicts:
                    # id and text only: these alternatives see no titles, which the judge sees (a handicap to note)
                    cited: list[Any] = [
                        {"n": n, "text": passages[n]} for n in verdict["citations"] if n in passages
                    ]
                    if not cited:
                        p_yes.append(None)
                        continue
                    system, user = confirmation_prompt(question, verdict["sentence"], cited)
                    p_yes.append(probability_yes(llm, system, user, None))
                p_yes_seconds = time.perf_counter() - t0
                cited_all = sorted({n for v in verdicts for n in v["citations"] if n in passages})
                item.update(
                    draft=draft, right=right, short_answer=short,
                    verdicts=[{"sentence": v["sentence"], "citations": v["citations"], "verdict": v["verdict"]} for v in verdicts],
                    answers_question=judged.get("answers_question"),
                    judge_keeps=any(v["verdict"] != "not" for v in verdicts),
                    p_yes=p_yes, p_yes_seconds=round(p_yes_seconds, 1),
                    code_backed=bool(short) and bool(backed_short_answer(short, [passages[n] for n in cited_all], tokenize)),
                    **cheap_features(judged, tokenize),
                )  # fmt: skip
            with partial.open("a", encoding="utf-8") as f:
                f.write(json.dumps(item, ensure_ascii=False) + "\n")
            print(
                f"{example.qid} draft={judged is not None} right={item.get('right')} judge={item.get('judge_keeps')} "
                f"p_yes={item.get('p_yes')} code={item.get('code_backed')} "
                f"{item['run_seconds']} s",
                flush=True,
            )


def load(split: str, seed: int = SEED) -> list[dict[str, Any]]:
    """The captured drafts: the partial file of a capture under way, else the finished copy kept in
    ``bench/results/`` (``--keep``), so that a fitted comparison can be rerun from a fresh clone."""
    partial = partial_path(partial_name(split, seed))
    if not partial.is_file():
        partial = RESULTS / f"{partial_name(split, seed)}.jsonl"
    if not partial.is_file():
        return []
    return [json.loads(line) for line in partial.read_text().splitlines() if line.strip()]


def best_p(item: dict[str, Any]) -> float:
    return max([p for p in item["p_yes"] if p is not None], default=0.0)


def decisions(item: dict[str, Any], cut: float) -> dict[str, bool]:
    """Each verifier's verdict on the draft: kept (True) or refused."""
    judge, code = item["judge_keeps"], bool(item["code_backed"])
    named_and_unstated = (
        bool(item["short_answer"]) and not code
    )  # the judge named a short answer no passage states
    p_yes = best_p(item) >= cut
    kept = {
        "judge": judge, "accept_all": True, "p_yes": p_yes, "code": code,
        "judge_or_code": judge or code, "judge_or_p_yes": judge or p_yes,
        "judge_and_p_yes": judge and p_yes, "judge_and_code": judge and code,
        "judge_and_named_stated": judge and not named_and_unstated,
    }  # fmt: skip
    if "copy_fault" in item:  # asked only before session 18
        copy = item["copy_fault"] is None
        kept.update(copy=copy, judge_or_copy=judge or copy)
    return kept


def table(items: list[dict[str, Any]], cut: float) -> dict[str, dict[str, Any]]:
    """Per verifier: right drafts kept, wrong drafts refused, outcomes over every question."""
    drafted = [i for i in items if "right" in i]
    rights = [i for i in drafted if i["right"]]
    wrongs = [i for i in drafted if not i["right"]]
    out: dict[str, dict[str, Any]] = {}
    # a verifier is compared only where every draft was asked it (copy: captures before session 18)
    names = (
        [n for n in decisions(drafted[0], cut) if all(n in decisions(i, cut) for i in drafted)]
        if drafted
        else []
    )
    for name in names:
        kept_right = sum(decisions(i, cut)[name] for i in rights)
        refused_wrong = sum(not decisions(i, cut)[name] for i in wrongs)
        # Outcome: a kept right draft, or a refused draft to an unanswerable question; questions without
        # a draft keep the default's outcome (refused: right only when unanswerable).
        correct = kept_right + sum(1 for i in wrongs if not i["answerable"] and not decisions(i, cut)[name])
        correct += sum(1 for i in items if "right" not in i and not i["answerable"] and i["default_refused"])
        out[name] = {
            "right_drafts_kept": f"{kept_right}/{len(rights)}",
            "wrong_drafts_refused": f"{refused_wrong}/{len(wrongs)}",
            "outcome_accuracy": round(correct / len(items), 3),
        }
    return out


def calibrate(items: list[dict[str, Any]]) -> float:
    """The P(yes) cut-off with the best draft accuracy (right kept + wrong refused) on these items."""
    drafted = [i for i in items if "right" in i]
    cuts = sorted({best_p(i) for i in drafted} | {0.0, 1.01})  # 1.01: refuse every draft

    def score(cut: float) -> int:
        return sum((best_p(i) >= cut) == i["right"] for i in drafted)

    return max(cuts, key=lambda c: (score(c), -c))


def compare(seed: int = SEED) -> None:
    calibration, report = load("calibration", seed), load("report", seed)
    cut = calibrate(calibration)
    saved = {
        "p_yes_cut": round(cut, 3),
        "calibration": {"questions": len(calibration), "table": table(calibration, cut)},
        "report": {"questions": len(report), "table": table(report, cut)},
        "seconds_per_draft": {
            "p_yes": round(sum(i.get("p_yes_seconds", 0) for i in report) / max(1, sum("right" in i for i in report)), 1),
            "copy": round(sum(i.get("copy_seconds", 0) for i in report) / max(1, sum("right" in i for i in report)), 1),
        },
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "verifier_set.json" if seed == 0 else f"verifier_set_seed{seed}.json"
    (RESULTS / name).write_text(json.dumps(saved, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(saved, indent=1))


def default_outcome(item: dict[str, Any]) -> bool:
    """The captured default run's outcome, scored as ``bench.mixed_set`` scores its own runs."""
    from agent.eval.answer_metrics import answer_contained, strip_citations

    if not item["answerable"]:
        return bool(item["default_refused"])
    text = "" if item["default_refused"] else strip_citations(item["default_answer"])
    return bool(text) and answer_contained(text, item["gold"], item["language"])


def paired(split: str, rerun_file: Path, seed: int = SEED) -> dict[str, Any]:
    """A ``bench.mixed_set`` rerun of some captured questions under a changed default, paired with the
    captured default run of the same questions: outcomes won and lost, refusals, McNemar."""
    from bench.qa_compare import mcnemar_exact

    captured = {i["qid"]: i for i in load(split, seed)}
    rerun = json.loads(rerun_file.read_text(encoding="utf-8"))["results"]
    rows = [(captured[r["qid"]], r) for r in rerun if r["qid"] in captured]
    won = [r["qid"] for c, r in rows if r["outcome_correct"] and not default_outcome(c)]
    lost = [r["qid"] for c, r in rows if default_outcome(c) and not r["outcome_correct"]]
    answerable = [(c, r) for c, r in rows if c["answerable"]]
    return {
        "rerun": rerun_file.name,
        "questions": len(rows),
        "outcome_correct_default_then_rerun": [sum(default_outcome(c) for c, _ in rows), sum(r["outcome_correct"] for _, r in rows)],
        "won": won, "lost": lost, "mcnemar_p": round(mcnemar_exact(len(won), len(lost)), 4),
        "answerable_refused_default_then_rerun": [sum(c["default_refused"] for c, _ in answerable), sum(r["refused"] for _, r in answerable)],
        "unanswerable_answered_default_then_rerun": [
            sum(not c["default_refused"] for c, _ in rows if not c["answerable"]),
            sum(not r["refused"] for c, r in rows if not c["answerable"]),
        ],
        "rerun_llm_calls_per_question": round(sum(r["llm_calls"] for _, r in rows) / max(1, len(rows)), 2),
        "rerun_seconds_per_question": round(sum(r["total_ms"] for _, r in rows) / 1000 / max(1, len(rows)), 1),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("calibration", "report"), default="calibration")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--skip", type=int, default=0, help="start after this many questions of the split")
    parser.add_argument(
        "--seed", type=int, default=SEED, help="the mixed set's seed (bench.mixed_set --seed)"
    )
    parser.add_argument("--compare", action="store_true", help="only compare the captured items")
    parser.add_argument(
        "--keep", action="store_true", help="copy the finished captures of --seed to bench/results/"
    )
    parser.add_argument(
        "--paired", type=Path, help="a bench.mixed_set result file of captured questions rerun under a change"
    )
    args = parser.parse_args()
    if args.keep:
        for split in ("calibration", "report"):
            partial = partial_path(partial_name(split, args.seed))
            if partial.is_file():
                (RESULTS / f"{partial_name(split, args.seed)}.jsonl").write_bytes(partial.read_bytes())
        return
    if args.paired:
        print(json.dumps(paired(args.split, args.paired, args.seed), indent=1))
        return
    if not args.compare:
        capture(args.split, args.limit, args.skip, args.seed)
    compare(args.seed)


if __name__ == "__main__":
    main()
