"""The mixed set (issue 22, item 3): outcome accuracy over answerable and unanswerable questions, English and
Chinese, single- and multi-hop, on one knowledge base (``agent/eval/mixed_set.py`` says how it is built).

    .venv/bin/python -m bench.mixed_set --build                 # writes the set (all / calibration / report)
    .venv/bin/python -m bench.mixed_set --split report --limit 300 [--tag NAME] [--resume] [--qids a,b]

A run saves ``bench/results/mixed_<split>[_<tag>].json``: outcome accuracy (an answerable question
answered with its gold answer, an unanswerable one refused), the refusal rate on answerable questions,
the answer rate on unanswerable ones, per source and per route, LLM calls and latency; each question is
appended to the run's partial file under ``--home`` as it finishes, and ``--resume`` picks it up.
Settings for an ablation are passed as ``--set graph.answer_gate={}`` (JSON values) with a ``--tag``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.eval.shared_data import shared_data_dir  # noqa: E402

DATA = shared_data_dir()
RESULTS = ROOT / "bench" / "results"
SPLITS = ("all", "calibration", "report")


def set_path(home: Path, split: str, seed: int) -> Path:
    return home / "mixed" / f"mixed_seed{seed}_{split}.json"


def build(home: Path, seed: int) -> None:
    from agent.eval.mixed_set import build_mixed_set, select_split

    dataset = build_mixed_set(DATA, seed=seed)
    for split in SPLITS:
        path = set_path(home, split, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(select_split(dataset, split).model_dump_json(), encoding="utf-8")
    counts = Counter((e.split, e.source, e.answerable) for e in dataset.examples)
    print(f"{len(dataset.examples)} questions, {len(dataset.passages)} passages; written under {path.parent}")
    for (split, source, answerable), n in sorted(counts.items()):
        print(f"  {split:<12} {source:<9} {'answerable' if answerable else 'unanswerable':<13} {n}")


def breakdown(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Outcome accuracy per source and per (language, answerable), with counts."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        source = r["qid"].split(":", 1)[0]
        groups[f"source={source}"].append(r["outcome_correct"])
        groups[f"{r['language']} {'answerable' if r['answerable'] else 'unanswerable'}"].append(
            r["outcome_correct"]
        )
    return {
        k: {"n": len(v), "outcome_accuracy": round(sum(v) / len(v), 4)} for k, v in sorted(groups.items())
    }


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``section.field=JSON`` pairs as nested settings overrides."""
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        node = overrides
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return overrides


def save_run(
    saved: dict[str, Any], name: str, command: str, overrides: list[str], resumed: int, partial: Path
) -> Path:
    """``bench/results/<name>.json``: an eval report with how it was made; its partial file goes."""
    saved["overrides"] = overrides
    saved["command"] = " ".join([command, *sys.argv[1:]])
    saved["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    saved["resumed_questions"] = resumed
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(saved, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    partial.unlink(missing_ok=True)
    return out


def peer_answerer(settings: Any) -> Any:
    """The peer graph (bench/peers/adaptive_rag.py) as run_qa_eval's answerer, on the same index."""
    from bench.peers.adaptive_rag import answer_question, build_peer

    def answer(question: str, resources: Any) -> Any:
        graph = build_peer(resources, list(settings.user_groups))
        return answer_question(question, resources, list(settings.user_groups), graph)

    return answer


def run(args: argparse.Namespace) -> None:
    from agent.eval.datasets import load_qa_dataset
    from agent.eval.qa import QAEvalConfig, QuestionResult, qa_settings, run_qa_eval

    path = set_path(args.home, args.split, args.seed)
    if not path.is_file():
        build(args.home, args.seed)
    name = (
        f"mixed_{args.split}"
        + ("_peer_adaptive_rag" if args.peer else "")
        + (f"_{args.tag}" if args.tag else "")
    )
    partial = args.home / "mixed" / f"{name}.partial.jsonl"
    if not args.resume:
        partial.unlink(missing_ok=True)
    done = (
        [
            QuestionResult.model_validate_json(line)
            for line in partial.read_text().splitlines()
            if line.strip()
        ]
        if partial.is_file()
        else []
    )

    def record(result: QuestionResult) -> None:
        with partial.open("a", encoding="utf-8") as f:
            f.write(result.model_dump_json() + "\n")

    qids = args.qids.split(",") if args.qids else None
    config = QAEvalConfig(dataset=path, format="mixed", limit=args.limit, route=args.route, qids=qids)
    dataset = load_qa_dataset(path, "mixed", limit=args.limit)
    settings = qa_settings(dataset, args.home, **parse_overrides(args.set))
    started = time.perf_counter()
    answerer = peer_answerer(settings) if args.peer else None
    report = run_qa_eval(
        config, settings, progress=sys.stderr.isatty(), on_result=record, done=done, answerer=answerer
    )
    saved = report.model_dump(mode="json")
    saved["breakdown"] = breakdown(saved["results"])
    out = save_run(saved, name, "python -m bench.mixed_set", args.set, len(done), partial)
    print(
        json.dumps(
            {"metrics": saved["metrics"], "breakdown": saved["breakdown"]}, indent=1, ensure_ascii=False
        )
    )
    print(f"saved {out} in {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="store_true", help="only (re)build the set")
    parser.add_argument("--home", type=Path, default=ROOT / ".ragpilot-bench")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=SPLITS, default="report")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--route", default="auto")
    parser.add_argument("--tag", default="")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=JSON")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument(
        "--qids", default="", help="comma-separated: only these of the first --limit questions"
    )
    parser.add_argument(
        "--peer", action="store_true", help="run the peer (LangGraph's adaptive-RAG design) instead"
    )
    args = parser.parse_args()
    if args.build:
        build(args.home, args.seed)
    else:
        run(args)


if __name__ == "__main__":
    main()
