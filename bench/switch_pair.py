"""One graph switch on and off, side by side, on document questions over user-style documents.

Both settings answer, in one sitting, every question with a gold answer of the named files in
``bench/data`` (``direct_probe_paraphrased``: its document questions; ``cross_lingual_questions``;
``cross_lingual_heldout``; ``pinyin_names_questions``: names written in pinyin, session 33;
``multi_hop_questions``: bridge and comparison questions across documents, session 34;
``multi_hop_heldout``: chains of two to four hops over other fictional documents, in English, Simplified
and Traditional Chinese, written in session 39 before any run;
``yes_no_questions``: yes/no questions, half of them answered "no", session 37), over the
knowledge base of ``bench.cross_lingual`` (the follow-up benchmark's Markdown documents and the bundled
samples, English and Chinese; with ``multi_hop_questions`` also ``bench/multi_hop/docs``, fictional
towns, people and firms that no model knows by heart, and with ``multi_hop_heldout``
``bench/multi_hop_heldout/docs``). An answer is right when it is not a refusal and
holds one gold string as a whole token (``bench.direct_fallback.holds_gold``); a yes/no question's answer
is right when its polarity (short answer first, else the answer's opening) is the gold one; to a
question marked ``"answerable": false`` a refusal is right; a comparison with an ``other`` option is right when it
names the gold option (``picks_gold``).
The summary gives right and refused per setting, the questions won and lost, McNemar's exact p, and
LLM calls. Results go to ``bench/results/<out>``; finished questions are kept in a partial file, so an
interrupted run resumes.

    .venv/bin/python -m bench.switch_pair --switch strips_follow_paragraphs \
        --questions direct_probe_paraphrased cross_lingual_questions --out strips_follow_paragraphs.json

``--check NAME`` pairs an answer check instead: 'on' runs it (the default), 'off' has it in
``graph.checks_off`` (the ablation of one check on these questions).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.cross_lingual import agents_over_user_documents, answer_row  # noqa: E402
from bench.direct_fallback import holds_gold  # noqa: E402
from bench.partials import append_row, finished_rows, partial_path, save_run  # noqa: E402
from core.vocabulary import ANSWER_CHECK_NAMES  # noqa: E402

QUESTION_FILES = (
    "direct_probe_paraphrased",
    "cross_lingual_questions",
    "cross_lingual_heldout",
    "pinyin_names_questions",
    "multi_hop_questions",
    "multi_hop_heldout",
    "yes_no_questions",
)
# Documents a question file needs beside the shared knowledge base.
EXTRA_DOCUMENTS = {
    "multi_hop_questions": (REPO / "bench" / "multi_hop" / "docs",),
    "multi_hop_heldout": (REPO / "bench" / "multi_hop_heldout" / "docs",),
    "yes_no_questions": (REPO / "bench" / "yes_no" / "docs", REPO / "bench" / "multi_hop" / "docs"),
}
_YES = frozenset({"yes", "是", "是的", "对", "都是"})
_NO = frozenset({"no", "否", "不是", "不", "不对", "不都是"})
# A Chinese answer without a short answer says "no" by one of these.
_CHINESE_NO = re.compile(r"不是|不都|并非|不在|不属于|不同|没有|否")


def document_questions(name: str) -> list[dict[str, Any]]:
    lines = (REPO / "bench" / "data" / f"{name}.jsonl").read_text("utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [{**r, "file": name} for r in rows if r.get("gold") or r.get("answerable") is False]


def is_right(item: dict[str, Any], answer: dict[str, Any]) -> bool:
    if item.get("answerable") is False:
        return bool(answer["refused"])
    if answer["refused"]:
        return False
    if item.get("polarity"):
        return answer_polarity(answer) == item["polarity"]
    if item.get("other"):  # "Which is older, A or B?": both names are in most answers
        return picks_gold(item, answer)
    return holds_gold(answer["answer"], item["gold"])


def picks_gold(item: dict[str, Any], answer: dict[str, Any]) -> bool:
    """A comparison's answer names the gold option: its short answer holds the gold and not the other
    option (naming both picks neither); when the short answer names neither ("1958") or there is none,
    the answer names the gold before the other option, if at all."""
    short = answer.get("short_answer") or ""
    gold, other = holds_gold(short, item["gold"]), holds_gold(short, item["other"])
    if gold or other:
        return gold and not other
    text = answer["answer"]
    first = {
        name: min((i for g in item[name] if (i := text.find(g)) >= 0), default=-1)
        for name in ("gold", "other")
    }
    return first["gold"] >= 0 and (first["other"] < 0 or first["gold"] < first["other"])


def answer_polarity(answer: dict[str, Any]) -> str | None:
    """'yes' or 'no' as the answer gives it: its short answer, else its opening word (English) or a
    negation anywhere in it (Chinese); None when it gives neither."""
    short = (answer.get("short_answer") or "").strip().lower().rstrip("。.!！")
    if short in _YES or short in _NO:
        return "yes" if short in _YES else "no"
    text = answer["answer"].strip()
    opening = re.match(r"(yes|no)\b", text, re.IGNORECASE)
    if opening:
        return opening.group(1).lower()
    if re.search(r"[\u4e00-\u9fff]", text):
        return "no" if _CHINESE_NO.search(text) else "yes"
    return None


def mcnemar_p(won: int, lost: int) -> float:
    """Exact two-sided McNemar p on the discordant pairs."""
    n = won + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(0, min(won, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    for row in rows:  # judged again from the saved answers: a resumed row keeps no stale verdict
        for name in ("on", "off"):
            row[name]["right"] = is_right(row, row[name])
    won = [r["question"] for r in rows if r["on"]["right"] and not r["off"]["right"]]
    lost = [r["question"] for r in rows if r["off"]["right"] and not r["on"]["right"]]
    out: dict[str, Any] = {"questions": len(rows)}
    for name in ("on", "off"):
        out[name] = {
            "right": sum(r[name]["right"] for r in rows),
            "refused": sum(r[name]["refused"] for r in rows),
            "llm_calls": round(sum(r[name]["llm_calls"] for r in rows) / max(1, len(rows)), 2),
            "mean_seconds": round(sum(r[name]["seconds"] for r in rows) / max(1, len(rows)), 2),
        }
    out["won"], out["lost"], out["mcnemar_p"] = won, lost, round(mcnemar_p(len(won), len(lost)), 4)
    return out


def arms(
    switches: Sequence[str] | None, check: str | None, also: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """The graph settings of the two arms: the switches all on and all off, or a check run and switched
    off."""
    both: dict[str, Any] = {name: True for name in also}
    if check:
        return {"on": both, "off": {**both, "checks_off": [check]}}
    assert switches
    return {arm: {**both, **{name: arm == "on" for name in switches}} for arm in ("on", "off")}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument(
        "--switch", nargs="+", help="a boolean field of the graph settings (several: all on against all off)"
    )
    chosen.add_argument(
        "--check",
        choices=ANSWER_CHECK_NAMES,
        help="an answer check: 'on' runs it, 'off' has it in checks_off",
    )
    parser.add_argument("--questions", nargs="+", choices=QUESTION_FILES, default=list(QUESTION_FILES))
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--split",
        choices=("calibration", "report"),
        help="only the questions of this split (files that mark one)",
    )
    parser.add_argument(
        "--language",
        choices=("en", "zh"),
        help="only the questions in this language (a switch that acts on one)",
    )
    parser.add_argument("--also", nargs="*", default=[], help="graph switches turned on in both settings")
    args = parser.parse_args()
    items = [q for name in args.questions for q in document_questions(name)]
    if args.split:
        items = [q for q in items if q.get("split") == args.split]
    if args.language:
        items = [q for q in items if q.get("language") == args.language]
    partial = partial_path(Path(args.out).stem)
    done = finished_rows(partial)
    with tempfile.TemporaryDirectory(prefix="ragpilot-switch-pair-") as home:
        agents = agents_over_user_documents(
            Path(home),
            arms(args.switch, args.check, args.also),
            sorted({folder for name in args.questions for folder in EXTRA_DOCUMENTS.get(name, ())}),
        )
        rows = []
        for item in items:
            if item["question"] in done:  # the question's fields as the data file has them now
                rows.append({**done[item["question"]], **item})
                continue
            row: dict[str, Any] = {**item, **{n: answer_row(a, item["question"]) for n, a in agents.items()}}
            for name in ("on", "off"):
                row[name]["right"] = is_right(item, row[name])
            rows.append(row)
            append_row(partial, row)
            print(
                f"{int(row['on']['right'])}{int(row['off']['right'])}  {item['file'][:14]:14s} {item['question']}"
                f"  | {row['on']['answer'][:50]!r} | {row['off']['answer'][:50]!r}",
                flush=True,
            )
        for agent in agents.values():
            agent.close()
    by_kind = {name: summary([r for r in rows if r["file"] == name]) for name in args.questions}
    by_kind["all"] = summary(rows)
    save_run(
        args.out,
        "bench.switch_pair",
        by_kind,
        rows,
        switch=" + ".join(args.switch) if args.switch else f"check {args.check}",
        split=args.split,
        also_on=args.also,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
