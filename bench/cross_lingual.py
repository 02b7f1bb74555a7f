"""What ``graph.retry_across_languages`` does end to end, on questions asked in the other language than
the document that answers them.

The multilingual embedder ranks passages in the question's language first and BM25 shares no words
across languages, so "年假有多少天？" over an English handbook and a Chinese manual retrieves the manual.
With the switch, a re-retrieval (CRAG's knowledge-base retry, IsUse's) also searches with the question
translated into the other language the first search found documents in, and reranks each passage
against the wording in its own language.

Both settings answer, in one sitting, the 40 questions of ``bench/data/cross_lingual_questions.jsonl``
(written before the switch was run on them) over one knowledge base holding the follow-up benchmark's
documents and the bundled samples (English and Chinese): 15 English questions about Chinese
documents, 15 Chinese questions about English ones, and 10 same-language questions, where the switch
must cost nothing. A question whose run with the switch translated nothing took the same path as
without it (the same prompts, greedy decoding), so that run is not repeated. An answer is right when it is not a refusal and holds one gold string as a whole
token. Results go to ``bench/results/<out>``; finished questions are kept in a partial file, so an
interrupted run resumes.

    .venv/bin/python -m bench.cross_lingual [--out cross_lingual.json] [--only 'q1|q2']
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from agent.agent import Agent  # noqa: E402
from bench.direct_fallback import holds_gold  # noqa: E402
from bench.partials import partial_path  # noqa: E402
from core.settings import load_settings  # noqa: E402
from tools.knowledge_base.ingest import ingest  # noqa: E402

RESULTS = REPO / "bench" / "results"
SETTINGS = {"on": True, "off": False}


def questions() -> list[dict[str, Any]]:
    lines = (REPO / "bench" / "data" / "cross_lingual_questions.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    for row in rows:  # judged again from the saved answers: a resumed row keeps no stale verdict
        for name in SETTINGS:
            row[name]["right"] = not row[name]["refused"] and holds_gold(row[name]["answer"], row["gold"])
    out: dict[str, Any] = {"questions": len(rows)}
    for name in SETTINGS:
        out[name] = {
            "right": sum(r[name]["right"] for r in rows),
            "refused": sum(r[name]["refused"] for r in rows),
            "translated": sum(r[name]["translated"] for r in rows),
            "llm_calls": round(sum(r[name]["llm_calls"] for r in rows) / max(1, len(rows)), 2),
            "mean_seconds": round(sum(r[name]["seconds"] for r in rows) / max(1, len(rows)), 2),
        }
    out["same_path"] = sum(bool(r["off"].get("same_path")) for r in rows)
    out["won"] = [r["question"] for r in rows if r["on"]["right"] and not r["off"]["right"]]
    out["lost"] = [r["question"] for r in rows if r["off"]["right"] and not r["on"]["right"]]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="cross_lingual.json")
    parser.add_argument("--only", default="", help="these questions only, separated by '|'")
    args = parser.parse_args()
    only = {q for q in args.only.split("|") if q}
    items = [q for q in questions() if not only or q["question"] in only]
    partial = partial_path(Path(args.out).stem)
    done = {}
    if partial.is_file():
        done = {r["question"]: r for r in map(json.loads, partial.read_text("utf-8").splitlines()) if r}

    with tempfile.TemporaryDirectory(prefix="ragpilot-cross-lingual-") as home:
        agents = {}
        for name, on in SETTINGS.items():
            settings = load_settings(home=Path(home) / name, graph={"retry_across_languages": on})
            ingest([REPO / "bench" / "follow_ups" / "docs", REPO / "samples"], settings, progress=False)
            agents[name] = Agent(settings)
        rows = []
        for item in items:
            if item["question"] in done:
                rows.append(done[item["question"]])
                continue
            row: dict[str, Any] = dict(item)
            for name, agent in agents.items():
                if name == "off" and not row["on"]["translated"]:
                    # No retry translated: the switch changed no prompt, and greedy decoding takes the
                    # same path, so the run without it is the same run.
                    row["off"] = {**row["on"], "same_path": True}
                    continue
                answer = agent.ask(item["question"]).model_dump()
                row[name] = {
                    "answer": answer["answer"],
                    "route": answer["route"],
                    "refused": answer["refused"],
                    "refusal_reason": answer["refusal_reason"],
                    "queries": answer["queries"],
                    "translated": any(q.isascii() != item["question"].isascii() for q in answer["queries"]),
                    "citations": len(answer["citations"]),
                    "llm_calls": answer["llm_calls"],
                    "seconds": round(answer["total_ms"] / 1000, 2),
                }
                row[name]["right"] = not answer["refused"] and holds_gold(answer["answer"], item["gold"])
            rows.append(row)
            with partial.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            print(
                f"{row['on']['right']:d}{row['off']['right']:d}  {item['kind']}  {row['on']['route']:9s} "
                f"{item['question']}  | {row['on']['answer'][:60]!r}",
                flush=True,
            )
        for agent in agents.values():
            agent.close()

    result = {
        "by_kind": {kind: summary([r for r in rows if r["kind"] == kind]) for kind in ("cross", "same")},
        "load_average": os.getloadavg(),
        "command": "python -m bench.cross_lingual " + " ".join(sys.argv[1:]),
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(json.dumps(result["by_kind"], ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
