"""What the cross-language switches do end to end, on questions asked in the other language than the
document that answers them.

The multilingual embedder ranks passages in the question's language first and BM25 shares no words
across languages, so "年假有多少天？" over an English handbook and a Chinese manual retrieves the manual.
``graph.retry_across_languages``: a re-retrieval (CRAG's knowledge-base retry, IsUse's) also searches
with the question translated into the other language the first search found documents in, and the
passages and their strips are judged against the wording in their own language.
``graph.share_across_languages``: the fitted draft verifier compares a sentence written in the other
language than its passage by the names and numbers both write alike.

Three settings answer, in one sitting, the questions of ``bench/data/cross_lingual_questions.jsonl``
(written before either switch was run on them) over one knowledge base holding the follow-up
benchmark's documents and the bundled samples (English and Chinese): 15 English questions about
Chinese documents, 15 Chinese questions about English ones, and 10 same-language questions, where the
switches must cost nothing. ``on``: both switches; ``no_share``: the retry alone; ``off``: neither.
A same-language question whose run with both switches translated nothing and cited only passages in
its own language took the same path as without them (the same prompts, greedy decoding), so it is not
run again. ``--reuse-off FILE`` takes the ``off`` answers from an earlier result of this script (the
code path with both switches off is unchanged by them). An answer is right when it is not a refusal
and holds one gold string as a whole token. Results go to ``bench/results/<out>``; finished questions
are kept in a partial file, so an interrupted run resumes.

    .venv/bin/python -m bench.cross_lingual [--out cross_lingual.json] [--only 'q1|q2'] [--reuse-off FILE]

``--questions cross_lingual_heldout --out cross_lingual_heldout.json``: the 13 questions of
``bench/data/direct_probe_paraphrased.jsonl`` (session 31) asked in the other language than the document
that answers them. The share switch was shaped on misses of the 40 written questions; these 13 were
never run through either switch before this check.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from agent.agent import Agent  # noqa: E402
from bench.direct_fallback import holds_gold  # noqa: E402
from bench.partials import append_row, finished_rows, partial_path, save_run  # noqa: E402
from core.settings import load_settings  # noqa: E402
from tools.knowledge_base.ingest import ingest  # noqa: E402
from tools.knowledge_base.text_units import detect_language  # noqa: E402

SETTINGS = {
    "on": {"retry_across_languages": True, "share_across_languages": True},
    "no_share": {"retry_across_languages": True, "share_across_languages": False},
    "off": {"retry_across_languages": False, "share_across_languages": False},
}


def questions(name: str = "cross_lingual_questions") -> list[dict[str, Any]]:
    lines = (REPO / "bench" / "data" / f"{name}.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def translated(question: str, queries: list[str]) -> bool:
    """Some query is written in the other script than the question (a retry's translation)."""
    return any(q.isascii() != question.isascii() for q in queries)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    for row in rows:  # judged again from the saved answers: a resumed row keeps no stale verdict
        for name in SETTINGS:
            row[name]["right"] = not row[name]["refused"] and holds_gold(row[name]["answer"], row["gold"])
    out: dict[str, Any] = {"questions": len(rows)}
    for name in SETTINGS:
        out[name] = {
            "right": sum(r[name]["right"] for r in rows),
            "refused": sum(r[name]["refused"] for r in rows),
            "translated": sum(translated(r["question"], r[name]["queries"]) for r in rows),
            "llm_calls": round(sum(r[name]["llm_calls"] for r in rows) / max(1, len(rows)), 2),
            "mean_seconds": round(sum(r[name]["seconds"] for r in rows) / max(1, len(rows)), 2),
        }
    for name in ("no_share", "off"):
        out[f"on_vs_{name}"] = {
            "won": [r["question"] for r in rows if r["on"]["right"] and not r[name]["right"]],
            "lost": [r["question"] for r in rows if r[name]["right"] and not r["on"]["right"]],
        }
    out["same_path"] = sum(bool(r["off"].get("same_path")) for r in rows)
    return out


def agents_over_user_documents(
    home: Path, graph_settings: dict[str, dict[str, Any]], extra: Sequence[Path] = ()
) -> dict[str, Agent]:
    """One agent per named graph setting, each over its own copy of the follow-up benchmark's documents
    and the bundled samples (English and Chinese), and the ``extra`` folders, under ``home``."""
    agents = {}
    for name, switches in graph_settings.items():
        settings = load_settings(home=home / name, graph=switches)
        ingest([REPO / "bench" / "follow_ups" / "docs", REPO / "samples", *extra], settings, progress=False)
        agents[name] = Agent(settings)
    return agents


def answer_row(agent: Agent, question: str) -> dict[str, Any]:
    answer = agent.ask(question).model_dump()
    return {
        "answer": answer["answer"],
        "short_answer": answer["short_answer"],
        "route": answer["route"],
        "refused": answer["refused"],
        "refusal_reason": answer["refusal_reason"],
        "queries": answer["queries"],
        # the cited documents' languages, read from their titles
        "cited_languages": sorted({detect_language(c["title"]) for c in answer["citations"]}),
        "citations": len(answer["citations"]),
        "llm_calls": answer["llm_calls"],
        "seconds": round(answer["total_ms"] / 1000, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="cross_lingual.json")
    parser.add_argument("--only", default="", help="these questions only, separated by '|'")
    parser.add_argument(
        "--questions",
        choices=("cross_lingual_questions", "cross_lingual_heldout"),
        default="cross_lingual_questions",
    )
    parser.add_argument("--reuse-off", default="", help="an earlier result whose 'off' answers are kept")
    args = parser.parse_args()
    only = {q for q in args.only.split("|") if q}
    items = [q for q in questions(args.questions) if not only or q["question"] in only]
    partial = partial_path(Path(args.out).stem)
    done = finished_rows(partial)
    reused = {}
    if args.reuse_off:
        reused = {
            r["question"]: r["off"] for r in json.loads(Path(args.reuse_off).read_text("utf-8"))["rows"]
        }

    with tempfile.TemporaryDirectory(prefix="ragpilot-cross-lingual-") as home:
        agents = agents_over_user_documents(Path(home), SETTINGS)
        rows = []
        for item in items:
            if item["question"] in done:
                rows.append(done[item["question"]])
                continue
            question = item["question"]
            row: dict[str, Any] = dict(item)
            row["on"] = answer_row(agents["on"], question)
            own_language = "en" if question.isascii() else "zh"
            same_path = item["kind"] == "same" and not translated(question, row["on"]["queries"])
            same_path = same_path and set(row["on"]["cited_languages"]) <= {own_language}
            for name in ("no_share", "off"):
                if same_path:
                    row[name] = {**row["on"], "same_path": True}
                elif name == "off" and question in reused:
                    row[name] = {**reused[question], "reused_from": args.reuse_off}
                else:
                    row[name] = answer_row(agents[name], question)
            for name in SETTINGS:
                row[name]["right"] = not row[name]["refused"] and holds_gold(
                    row[name]["answer"], item["gold"]
                )
            rows.append(row)
            append_row(partial, row)
            print(
                "".join(str(int(row[n]["right"])) for n in SETTINGS)
                + f"  {item['kind']}  {row['on']['route']:9s} {question}  | {row['on']['answer'][:60]!r}",
                flush=True,
            )
        for agent in agents.values():
            agent.close()

    by_kind = {kind: summary([r for r in rows if r["kind"] == kind]) for kind in ("cross", "same")}
    save_run(args.out, "bench.cross_lingual", by_kind, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
