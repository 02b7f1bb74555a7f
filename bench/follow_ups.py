"""Follow-up benchmark (issue 11, item 5): two-turn conversations through the real CLI, one process per turn.

``bench/follow_ups/docs`` holds ten small documents written for it (five English, five Chinese) and
``bench/follow_ups/conversations.json`` 42 conversations over them, each with a gold answer for
turn 2 that only makes sense with turn 1: pronouns ("that author", "它"), "what else…", "the second
one" / "那第二部", another entity ("And the one in Madrid?") or another year ("And in 2024?").

The documents are ingested once into ``<home>`` (``ragpilot ingest``); then every turn is its own
``ragpilot ask … --thread ID --json`` process, so the thread survives a process restart through the
SQLite checkpointer, exactly as a user's chat does. Turn 2 is correct when it is not a refusal and
its shown text (short answer and sentences) contains a gold alias.

Each finished conversation is appended to its partial file (``bench/partials.py``): an interrupted run resumes.
``--repo`` runs another checkout's code (e.g. a ``git worktree`` of an earlier commit) for a
before/after comparison on the same conversations.

    .venv/bin/python -m bench.follow_ups                       # saves bench/results/follow_ups.json
    .venv/bin/python -m bench.follow_ups --repo /tmp/before --out follow_ups_before.json
    .venv/bin/python -m bench.follow_ups --only en-21,en-22 --out follow_ups_direct.json  # a subset

``--set bench/follow_ups_heldout`` runs another folder of the same shape (``docs/`` and
``conversations.json``): 25 conversations over five documents of other domains, written in session 28
to measure the follow-up rules (list references, "what else", pronouns) on conversations they were not
written from, including turns where they must not fire. Never tune on them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.partials import partial_path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "bench" / "follow_ups"
RESULTS = ROOT / "bench" / "results"


def ragpilot(repo: Path, home: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """One fresh ``ragpilot`` process running ``repo``'s code on the data directory ``home``."""
    env = {**os.environ, "RAGPILOT_HOME": str(home), "PYTHONPATH": str(repo)}
    command = [sys.executable, "-c", "from agent.cli import app; app()", *args]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)


def ask(repo: Path, home: Path, question: str, thread: str) -> dict[str, Any]:
    started = time.perf_counter()
    result = ragpilot(repo, home, "ask", question, "--thread", thread, "--json")
    seconds = round(time.perf_counter() - started, 2)
    if result.returncode != 0:
        return {
            "error": result.stderr.strip().splitlines()[-1:] or ["exit " + str(result.returncode)],
            "seconds": seconds,
        }
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    return {
        "answer": answer.get("answer", ""),
        "short_answer": answer.get("short_answer", ""),
        "refused": answer.get("refused", False),
        "standalone_question": answer.get("standalone_question"),
        "route": answer.get("route"),
        "llm_calls": answer.get("llm_calls"),
        "total_ms": answer.get("total_ms"),
        "seconds": seconds,
    }


def is_correct(turn: dict[str, Any], gold: list[str]) -> bool:
    if turn.get("error") or turn.get("refused"):
        return False
    shown = f"{turn.get('short_answer', '')} {turn.get('answer', '')}".lower()
    return any(alias.lower() in shown for alias in gold)


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    def share(rows: list[dict[str, Any]]) -> float:
        return round(sum(r["correct"] for r in rows) / len(rows), 4) if rows else 0.0

    by: dict[str, dict[str, list[dict[str, Any]]]] = {
        "language": defaultdict(list),
        "pattern": defaultdict(list),
    }
    for r in results:
        by["language"][r["language"]].append(r)
        by["pattern"][r["pattern"]].append(r)
    turn2_seconds = [r["turn2"]["seconds"] for r in results]
    return {
        "conversations": len(results),
        "turn2_correct": share(results),
        "turn2_refused": sum(bool(r["turn2"].get("refused")) for r in results),
        "errors": sum(bool(r["turn1"].get("error") or r["turn2"].get("error")) for r in results),
        "by_language": {k: {"n": len(v), "correct": share(v)} for k, v in sorted(by["language"].items())},
        "by_pattern": {k: {"n": len(v), "correct": share(v)} for k, v in sorted(by["pattern"].items())},
        "turn2_process_seconds_p50": round(statistics.median(turn2_seconds), 2) if turn2_seconds else None,
        "turn2_llm_calls_mean": round(statistics.mean(r["turn2"].get("llm_calls") or 0 for r in results), 2)
        if results
        else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repo", type=Path, default=ROOT, help="the checkout whose code runs (default: this one)"
    )
    parser.add_argument(
        "--home", type=Path, default=None, help="data directory (default .ragpilot-bench/follow_ups-<out>)"
    )
    parser.add_argument("--out", default="follow_ups.json", help="file name under bench/results")
    parser.add_argument(
        "--set",
        dest="conversation_set",
        type=Path,
        default=HERE,
        help="a folder with docs/ and conversations.json (default bench/follow_ups)",
    )
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--only", default=None, help="comma-separated conversation ids (e.g. the ones a change can affect)"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="forget an interrupted run's finished conversations"
    )
    args = parser.parse_args()

    conversation_set = args.conversation_set.resolve()
    conversations = json.loads((conversation_set / "conversations.json").read_text(encoding="utf-8"))
    conversations = conversations[: args.limit]
    if args.only:
        wanted = set(args.only.split(","))
        conversations = [c for c in conversations if c["id"] in wanted]
    out = RESULTS / args.out
    partial = partial_path(out.stem)
    home = args.home or ROOT / ".ragpilot-bench" / f"follow_ups-{out.stem}"
    if args.fresh:
        partial.unlink(missing_ok=True)
    done = {}
    if partial.is_file():
        for line in partial.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["id"]] = row
    home.mkdir(parents=True, exist_ok=True)
    ingest = ragpilot(args.repo, home, "ingest", str(conversation_set / "docs"), timeout=1800)
    if ingest.returncode != 0:
        print(ingest.stderr[-2000:], file=sys.stderr)
        return 1
    load_before = os.getloadavg()
    started = time.perf_counter()
    results = []
    for conversation in conversations:
        if conversation["id"] in done:
            results.append(done[conversation["id"]])
            continue
        thread = f"{conversation['id']}-{uuid.uuid4().hex[:8]}"  # a fresh thread per attempt
        turn1 = ask(args.repo, home, conversation["turn1"], thread)
        turn2 = ask(args.repo, home, conversation["turn2"], thread)
        row = {
            **conversation,
            "thread": thread,
            "turn1": turn1,
            "turn2": turn2,
            "correct": is_correct(turn2, conversation["gold"]),
        }
        with partial.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        results.append(row)
        mark = "ok " if row["correct"] else "BAD"
        print(
            f"{mark} {conversation['id']} {conversation['turn2']} -> {turn2.get('short_answer') or turn2.get('answer', turn2.get('error'))}",
            flush=True,
        )
    report = {
        "summary": summarize(results),
        "repo": str(args.repo),
        "set": str(conversation_set),
        "command": "python -m bench.follow_ups " + " ".join(sys.argv[1:]),
        "seconds_this_run": round(time.perf_counter() - started, 1),
        "resumed_conversations": len(done),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "results": results,
    }
    out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    partial.unlink(missing_ok=True)
    print(json.dumps(report["summary"], ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
