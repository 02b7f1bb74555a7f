"""What ``graph.direct_retrieves_first`` does end to end, on questions the router answers from memory.

The router sends short questions in a user's own words to 'direct' ("Who approves my holiday?",
"病假有几天？"), and the knowledge-base probe cannot tell many of them from general knowledge
(``bench.direct_probe --questions paraphrased``). With the switch, a 'direct' question whose probe
scores between CRAG's bars retrieves first and falls back to the direct answer when the sources do
not hold it; without it, the question is answered from memory.

Both settings answer, in one sitting, every question of ``bench/data/direct_probe_paraphrased.jsonl``
that the router calls 'direct' (on the others the switch changes nothing), over the knowledge base of
``bench.direct_probe`` (the follow-up benchmark's documents and the bundled samples). A document
question is right when the answer is not a refusal and holds one of its gold strings (written with the
questions, from the documents); a general question is right when it is answered (not refused) — its
answers are saved to be read. Results go to ``bench/results/<out>``; finished questions are kept in a
partial file, so an interrupted run resumes.

    .venv/bin/python -m bench.direct_fallback [--split report] [--out direct_fallback.json] [--only 'q1|q2']

``--switch retry_across_languages`` compares, with the pass on in both, the direct fallback's one
translated retry (a pass whose search found documents in another language) against none.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from agent.agent import Agent  # noqa: E402
from bench.direct_probe import paraphrased_questions  # noqa: E402
from bench.partials import append_row, finished_rows, partial_path, save_run  # noqa: E402
from core.settings import load_settings  # noqa: E402
from tools.knowledge_base.ingest import ingest  # noqa: E402

SETTINGS = {"on": True, "off": False}


def right(item: dict[str, Any], answer: dict[str, Any]) -> bool:
    """Not refused, and for a document question one gold string as a whole token ("5 minutes" is not
    in "15 minutes", "7" not in "7.5 kg")."""
    if answer["refused"]:
        return False
    return item["kind"] != "document" or holds_gold(answer["answer"], item["gold"])


def holds_gold(answer: str, golds: list[str]) -> bool:
    """One gold string in ``answer`` as a whole token ("5 minutes" is not in "15 minutes")."""
    return any(
        re.search(rf"(?<![0-9A-Za-z]){re.escape(gold)}(?![0-9]|\.[0-9])", answer, re.IGNORECASE)
        for gold in golds
    )


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    for row in rows:  # judged again from the saved answers: a resumed row keeps no stale verdict
        for name in SETTINGS:
            row[name]["right"] = right(row, row[name])
    out: dict[str, Any] = {"questions": len(rows)}
    for name in SETTINGS:
        out[name] = {
            "right": sum(r[name]["right"] for r in rows),
            "refused": sum(r[name]["refused"] for r in rows),
            "retrieved": sum(r[name]["route"] != "direct" or r[name]["fell_back"] for r in rows),
            "llm_calls": round(sum(r[name]["llm_calls"] for r in rows) / max(1, len(rows)), 2),
            "mean_seconds": round(sum(r[name]["seconds"] for r in rows) / max(1, len(rows)), 2),
        }
    out["won"] = [r["question"] for r in rows if r["on"]["right"] and not r["off"]["right"]]
    out["lost"] = [r["question"] for r in rows if r["off"]["right"] and not r["on"]["right"]]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=("calibration", "report", "all"), default="all")
    parser.add_argument("--out", default="direct_fallback.json")
    parser.add_argument(
        "--switch",
        choices=("direct_retrieves_first", "retry_across_languages"),
        default="direct_retrieves_first",
        help="the graph switch compared on / off (retry_across_languages: the direct fallback's translated retry)",
    )
    parser.add_argument("--only", default="", help="these questions only, separated by '|'")
    args = parser.parse_args()
    only = {q for q in args.only.split("|") if q}
    items = [
        q
        for q in paraphrased_questions()
        if args.split in ("all", q["split"]) and (not only or q["question"] in only)
    ]
    partial = partial_path(Path(args.out).stem)
    done = finished_rows(partial)

    with tempfile.TemporaryDirectory(prefix="ragpilot-direct-fallback-") as home:
        agents = {}
        for name, on in SETTINGS.items():
            settings = load_settings(home=Path(home) / name, graph={args.switch: on})
            ingest([REPO / "bench" / "follow_ups" / "docs", REPO / "samples"], settings, progress=False)
            agents[name] = Agent(settings)
        router = agents["on"].resources.classifier
        rows = []
        for item in items:
            if item["question"] in done:
                rows.append(done[item["question"]])
                continue
            verdict = router.classify(item["question"])
            if verdict.route != "direct":
                continue
            row: dict[str, Any] = {**item, "classifier_confidence": round(verdict.confidence, 4)}
            for name, agent in agents.items():
                answer = agent.ask(item["question"]).model_dump()
                fell_back = answer["route"] == "direct" and bool(answer["queries"])
                row[name] = {
                    "answer": answer["answer"],
                    "route": answer["route"],
                    "fell_back": fell_back,
                    "refused": answer["refused"],
                    "citations": len(answer["citations"]),
                    "llm_calls": answer["llm_calls"],
                    "seconds": round(answer["total_ms"] / 1000, 2),
                }
                row[name]["right"] = right(item, row[name])
            rows.append(row)
            append_row(partial, row)
            print(
                f"{row['on']['right']:d}{row['off']['right']:d}  {item['kind'][:3]}  {item['question']}",
                flush=True,
            )
        for agent in agents.values():
            agent.close()

    by_kind = {
        kind: summary([r for r in rows if (r["kind"] == "document") == (kind == "document")])
        for kind in ("document", "general")
    }
    save_run(args.out, "bench.direct_fallback", by_kind, rows, split=args.split)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
