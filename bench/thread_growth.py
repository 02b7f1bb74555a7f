"""How the SQLite thread store grows per turn, and what compaction keeps.

Runs a conversation of ``--turns`` real turns (samples corpus, offline models) in one thread with
compaction off, recording after each turn: checkpoints and pending writes stored, the bytes of
checkpoint blobs, and the database file size (after a WAL checkpoint). Then compacts the thread to
``chat.keep_checkpoints`` and reclaims the space, and checks the conversation is intact.

    .venv/bin/python bench/thread_growth.py --turns 4
Prints a table and writes bench/results/thread_growth.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from agent.agent import Agent  # noqa: E402
from agent.run_loop import run_to_answer  # noqa: E402
from agent.threads import ThreadStore  # noqa: E402
from core.settings import load_settings  # noqa: E402
from tools.knowledge_base.ingest import ingest  # noqa: E402

CONVERSATION = [
    "How many days of paid annual leave do Northwind employees get?",
    "And how many of them can be carried over?",
    "When do the carried-over days expire?",
    "How many days of sick leave do Northwind employees get?",
    "From which day is a medical certificate required?",
    "What about parental leave for the primary caregiver?",
]
THREAD = "growth"


def measure(saver: Any, db: Path) -> dict[str, int]:
    with saver.lock:
        saver.conn.commit()
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with saver.cursor(transaction=False) as cur:
        checkpoints, blob_bytes = cur.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(checkpoint)), 0) FROM checkpoints WHERE thread_id = ?",
            (THREAD,),
        ).fetchone()
        writes, write_bytes = cur.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?", (THREAD,)
        ).fetchone()
    return {
        "checkpoints": checkpoints,
        "checkpoint_blob_bytes": blob_bytes,
        "writes": writes,
        "write_bytes": write_bytes,
        "db_file_bytes": db.stat().st_size,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=4, choices=range(1, len(CONVERSATION) + 1))
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results" / "thread_growth.json")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ragpilot-thread-bench-") as home:
        # Compaction off while growing (the streaming path compacts to keep_checkpoints after each turn).
        settings = load_settings(home=Path(home), chat={"keep_checkpoints": 10_000})
        ingest([REPO_ROOT / "samples"], settings, progress=False)
        agent = Agent(settings)
        saver = agent.graph.checkpointer
        rows = []
        for turn, question in enumerate(CONVERSATION[: args.turns], start=1):
            answer = run_to_answer(agent, question, thread_id=THREAD)
            row = {
                "turn": turn,
                "question": question,
                "steps": len(answer.timings),
                **measure(saver, settings.threads_db),
            }
            rows.append(row)
            print(
                f"turn {turn}: {row['checkpoints']:>4} checkpoints  {row['checkpoint_blob_bytes']:>9} B blobs  "
                f"{row['db_file_bytes']:>9} B file  — {answer.answer[:60]!r}"
            )
        store = ThreadStore(saver, keep_checkpoints=2)
        removed = store.compact([THREAD])
        store.reclaim_space()
        after = measure(saver, settings.threads_db)
        turns_kept = len(store.get_thread(THREAD).turns)
        agent.close()

    per_turn = [
        {
            k: rows[i][k] - (rows[i - 1][k] if i else 0)
            for k in ("checkpoints", "checkpoint_blob_bytes", "db_file_bytes")
        }
        for i in range(len(rows))
    ]
    result = {
        "turns": rows,
        "growth_per_turn": per_turn,
        "after_compaction_keep_2": after
        | {"checkpoints_removed": removed, "turns_still_in_thread": turns_kept},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    print(
        json.dumps(
            {"growth_per_turn": per_turn, "after_compaction_keep_2": result["after_compaction_keep_2"]},
            indent=2,
        )
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
