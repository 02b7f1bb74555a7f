"""The ablation bench (issue 22, item 2): each answer check switched off in turn, on the mixed set's
report split, paired against the same questions with every check on.

    .venv/bin/python -m bench.ablation --limit 100 --switches            # runs what is missing, then compares
    .venv/bin/python -m bench.ablation --limit 100 --first 40 --only constraints,support
    .venv/bin/python -m bench.ablation --limit 100 --first 40 --compare  # only the comparison of finished runs

The baseline is one ``bench.mixed_set`` run with every check on (tag ``ablation<limit>_none``); each of
its questions records the checks that found a fault in any of its drafts (``checks_fired``). A check
that never fired on a question cannot change that question's run when it is switched off (the local
model decodes greedily), so each condition reruns only the questions its check fired on
(``--qids``, ``--set graph.checks_off=[...]``, tag ``ablation<limit>_<check>``) and keeps the baseline's
rows for the rest. A control reruns the baseline itself on up to ``--control`` of the fired questions:
its agreement says how far "the same run twice" is from identical on this machine.

The comparison, saved as ``bench/results/ablation_<split>_<limit>[_first<N>].json``: per check, the questions it
fired on, outcome accuracy with and without it, questions it wins and loses (a right outcome only with
the check / only without it), the exact McNemar p-value of that split, refusals of answerable
questions, answers to unanswerable ones, and LLM calls. A check whose removal loses nothing on these
held-out questions has not earned its place. ``--switches`` measures settings that are off by default
the same way (``SWITCHES``, each rerun on the questions it can change; there "with" is the switch on).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.qa_compare import mcnemar_exact  # noqa: E402
from core.vocabulary import ANSWER_CHECK_NAMES  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def run_name(split: str, limit: int, condition: str) -> str:
    return f"mixed_{split}_ablation{limit}_{condition}"  # a rerun's file is named by its condition


# Settings switched on, each rerun on the baseline's questions it can change: those of a route, or those
# a check fired on ("fired:<check>").
SWITCHES: dict[str, tuple[list[str], str]] = {
    "regenerate_unsupported": (["graph.regenerate_unsupported=true"], "fired:support"),
}


def run_condition(
    split: str, limit: int, condition: str, qids: list[str] | None = None, part: str = ""
) -> None:
    """One condition's run; ``part`` names a later run that adds questions to an earlier one."""
    off = [] if condition in ("none", "control") or condition in SWITCHES else [condition]
    command = [
        sys.executable, "-m", "bench.mixed_set", "--split", split, "--limit", str(limit), "--resume",
        "--tag", f"ablation{limit}_{condition}{part}", "--set", f"graph.checks_off={json.dumps(off)}",
    ]  # fmt: skip
    for override in SWITCHES.get(condition, ([], ""))[0]:
        command += ["--set", override]
    if qids is not None:
        command += ["--qids", ",".join(qids)]
    print(f"== {condition} ({'all' if qids is None else len(qids)} questions)", flush=True)
    subprocess.run(command, cwd=ROOT, check=True)


def rerun_rows(split: str, limit: int, condition: str) -> dict[str, dict[str, Any]]:
    """A condition's reruns: its first run and the runs that added questions to it (``_more<n>``)."""
    found: dict[str, dict[str, Any]] = {}
    for part in (
        "",
        *sorted(
            p.stem.rsplit("_more", 1)[1]
            for p in RESULTS.glob(f"{run_name(split, limit, condition)}_more*.json")
        ),
    ):
        found.update(rows(split, limit, condition + (f"_more{part}" if part else "")) or {})
    return found


def rows(split: str, limit: int, condition: str) -> dict[str, dict[str, Any]] | None:
    path = RESULTS / f"{run_name(split, limit, condition)}.json"
    if not path.is_file():
        return None
    return {r["qid"]: r for r in json.loads(path.read_text(encoding="utf-8"))["results"]}


def fired_on(base: dict[str, dict[str, Any]], check: str) -> list[str]:
    """The baseline's questions on which ``check`` found a fault, in run order."""
    missing = [q for q, r in base.items() if "checks_fired" not in r]
    if missing:
        sys.exit(f"the baseline's row {missing[0]!r} has no checks_fired: rerun it with this code")
    return [q for q, r in base.items() if check in r["checks_fired"]]


def with_reruns(
    base: dict[str, dict[str, Any]], rerun: dict[str, dict[str, Any]], qids: list[str]
) -> dict[str, dict[str, Any]]:
    """The condition's table: the rerun rows where the check fired, the baseline's everywhere else."""
    if not set(qids) <= set(rerun):
        sys.exit("a rerun lacks questions its check fired on: run the bench without --compare")
    wanted = set(qids)
    return {q: rerun[q] if q in wanted else r for q, r in base.items()}


def affected_by(base: dict[str, dict[str, Any]], selector: str) -> list[str]:
    """The baseline's questions a switch can change: ``fired:<check>`` or a route's name."""
    if selector.startswith("fired:"):
        return fired_on(base, selector.removeprefix("fired:"))
    return [q for q, r in base.items() if r.get("route") == selector]


def control_qids(base: dict[str, dict[str, Any]], checks: list[str], size: int) -> list[str]:
    union = [q for q, r in base.items() if set(r.get("checks_fired") or ()) & set(checks)]
    return union[:size]


def agreement(base: dict[str, dict[str, Any]], again: dict[str, dict[str, Any]]) -> dict[str, Any]:
    same_outcome = [q for q in again if again[q]["outcome_correct"] == base[q]["outcome_correct"]]
    same_answer = [q for q in again if again[q]["answer"] == base[q]["answer"]]
    return {
        "questions": len(again),
        "same_outcome": len(same_outcome),
        "same_answer_text": len(same_answer),
        "differing": sorted(set(again) - set(same_outcome)),
    }


def effect(base: dict[str, dict[str, Any]], off: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the check does: the baseline has it, ``off`` does not (same questions)."""
    shared = sorted(set(base) & set(off))
    won = [q for q in shared if base[q]["outcome_correct"] and not off[q]["outcome_correct"]]
    lost = [q for q in shared if off[q]["outcome_correct"] and not base[q]["outcome_correct"]]

    def share(table: dict[str, dict[str, Any]], keep: Any) -> int:
        return sum(1 for q in shared if keep(table[q]))

    return {
        "questions": len(shared),
        "outcome_with_check": round(share(base, lambda r: r["outcome_correct"]) / len(shared), 4),
        "outcome_without": round(share(off, lambda r: r["outcome_correct"]) / len(shared), 4),
        "won_by_the_check": len(won),
        "lost_to_the_check": len(lost),
        "mcnemar_p": round(mcnemar_exact(len(won), len(lost)), 4),
        "answerable_refused_with": share(base, lambda r: r["answerable"] and r["refused"]),
        "answerable_refused_without": share(off, lambda r: r["answerable"] and r["refused"]),
        "unanswerable_answered_with": share(base, lambda r: not r["answerable"] and not r["refused"]),
        "unanswerable_answered_without": share(off, lambda r: not r["answerable"] and not r["refused"]),
        # One point of each risk–coverage curve: how many questions were answered, how many of those
        # answers were wrong (a wrong answer to an answerable question, or any answer to an unanswerable one).
        "answered_with": share(base, lambda r: not r["refused"]),
        "answered_without": share(off, lambda r: not r["refused"]),
        "wrong_answers_with": share(base, lambda r: not r["refused"] and not r["outcome_correct"]),
        "wrong_answers_without": share(off, lambda r: not r["refused"] and not r["outcome_correct"]),
        "llm_calls_with": round(sum(base[q]["llm_calls"] for q in shared) / len(shared), 2),
        "llm_calls_without": round(sum(off[q]["llm_calls"] for q in shared) / len(shared), 2),
        "won": won,
        "lost": lost,
    }


def _risk(e: dict[str, Any], side: str) -> str:
    """'wrong/answered (risk)' for one side of a condition; '—' for a report saved before these counts."""
    answered, wrong = e.get(f"answered_{side}"), e.get(f"wrong_answers_{side}")
    if answered is None or wrong is None:
        return "—"
    return f"{wrong}/{answered} ({wrong / answered:.2f})" if answered else "0/0"


def markdown(report: dict[str, Any]) -> str:
    """The report as the table docs/benchmarks.md and the closing note show."""
    lines = [
        "| condition | reran | outcome with → without | won / lost | McNemar p | answerable refused "
        "with → without | unanswerable answered with → without | wrong answers / answered with → without "
        "| LLM calls with → without |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, table, reran in (
        ("check on", report["checks"], "fired_on"),
        ("switch on", report["switches"], "reran"),
    ):
        for name, e in table.items():
            lines.append(
                f"| {name} ({kind}) | {e[reran]} | {e['outcome_with_check']:.3f} → {e['outcome_without']:.3f} | "
                f"{e['won_by_the_check']} / {e['lost_to_the_check']} | {e['mcnemar_p']} | "
                f"{e['answerable_refused_with']} → {e['answerable_refused_without']} | "
                f"{e['unanswerable_answered_with']} → {e['unanswerable_answered_without']} | "
                f"{_risk(e, 'with')} → {_risk(e, 'without')} | "
                f"{e['llm_calls_with']} → {e['llm_calls_without']} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="report", choices=("calibration", "report"))
    parser.add_argument("--limit", type=int, required=True)
    parser.add_argument("--only", default="", help="comma-separated checks or switches (default: all checks)")
    parser.add_argument("--switches", action="store_true", help="also measure SWITCHES, each switched on")
    parser.add_argument("--control", type=int, default=10, help="baseline reruns to check repeatability")
    parser.add_argument("--compare", action="store_true", help="compare finished runs only")
    parser.add_argument(
        "--first", type=int, default=None, help="rerun and compare on the baseline's first N questions only"
    )
    parser.add_argument(
        "--default-since", default="", type=lambda v: [c for c in v.split(",") if c],
        help="comma-separated conditions made the default after the baseline ran: their reruns replace "
        "the baseline's rows before anything is compared (e.g. support: regeneration off since session 14); "
        "fair only for reruns made under the new default",
    )  # fmt: skip
    args = parser.parse_args()
    checks: list[str] = [c for c in ANSWER_CHECK_NAMES if not args.only or c in args.only.split(",")]
    if not args.compare and rows(args.split, args.limit, "none") is None:
        run_condition(args.split, args.limit, "none")
    whole = rows(args.split, args.limit, "none")
    if whole is None:
        sys.exit("the baseline run (every check on) has not finished")
    base = dict(list(whole.items())[: args.first])  # run order: the first N questions
    for condition in args.default_since:  # a condition made the default after the baseline was run
        base = with_reruns(base, rerun_rows(args.split, args.limit, condition), fired_on(base, condition))
    switches = [w for w in SWITCHES if args.switches and (not args.only or w in args.only.split(","))]
    # Switches first: a candidate default is decided on them; the checks' figures can come later.
    plan: dict[str, list[str]] = {w: affected_by(base, SWITCHES[w][1]) for w in switches}
    plan.update({c: fired_on(base, c) for c in checks})
    if args.control:
        plan["control"] = control_qids(base, checks, args.control)
    if not args.compare:
        for condition, qids in plan.items():
            have = rerun_rows(args.split, args.limit, condition)
            missing = [q for q in qids if q not in have]
            if missing:  # a longer --first extends the earlier reruns instead of repeating them
                run_condition(args.split, args.limit, condition, missing, f"_more{len(have)}" if have else "")
    table: dict[str, Any] = {}
    for check in checks:
        qids = plan[check]
        rerun = rerun_rows(args.split, args.limit, check)
        if set(qids) <= set(rerun):
            table[check] = {"fired_on": len(qids), **effect(base, with_reruns(base, rerun, qids))}
    switched: dict[str, Any] = {}
    for switch in switches:  # "with" is the switch on; the baseline is the default, off
        qids = plan[switch]
        rerun = rerun_rows(args.split, args.limit, switch)
        if set(qids) <= set(rerun):
            switched[switch] = {"reran": len(qids), **effect(with_reruns(base, rerun, qids), base)}
    control = rerun_rows(args.split, args.limit, "control")
    again = {q: control[q] for q in plan.get("control", []) if q in control} or None
    report = {
        "split": args.split,
        "questions": len(base),
        "baseline_outcome": round(sum(r["outcome_correct"] for r in base.values()) / len(base), 4),
        "baseline_questions_run": len(whole),
        "baseline_outcome_all": round(sum(r["outcome_correct"] for r in whole.values()) / len(whole), 4),
        "checks": table,
        "switches": switched,
        "control": agreement(base, again) if again is not None else None,
        "command": " ".join(["python -m bench.ablation", *sys.argv[1:]]),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }
    first = f"_first{args.first}" if args.first else ""
    out = RESULTS / f"ablation_{args.split}_{args.limit}{first}.json"
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    summary = {
        c: {k: v for k, v in e.items() if k not in ("won", "lost")} for c, e in {**table, **switched}.items()
    }
    print(json.dumps({"checks": summary, "control": report["control"]}, indent=1))
    print(markdown(report))
    print(f"saved {out}")


if __name__ == "__main__":
    main()
