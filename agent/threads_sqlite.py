"""What langgraph-checkpoint-sqlite's ``SqliteSaver`` lacks, in one place: the only SQL on its tables.

The saver has ``list``/``get_tuple``/``delete_thread`` but no cheap way to name its threads or count
their checkpoints (``list`` decodes every checkpoint), and no ``prune`` (the base class's is not
implemented for SQLite). These read and trim its two tables, ``checkpoints`` and ``writes``, by
``thread_id`` / ``checkpoint_ns`` / ``checkpoint_id`` (time-ordered UUIDv6 strings: the largest ids are
the latest). ``tests/agent/test_threads.py`` runs them against the real saver.
"""

from __future__ import annotations

import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver


def thread_ids(saver: SqliteSaver) -> list[str]:
    with saver.cursor(transaction=False) as cur:
        rows = cur.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    return [str(row[0]) for row in rows]


def checkpoint_counts(saver: SqliteSaver) -> dict[str, int]:
    with saver.cursor(transaction=False) as cur:
        rows = cur.execute("SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id").fetchall()
    return {str(thread_id): int(count) for thread_id, count in rows}


def keep_latest(saver: SqliteSaver, thread_ids: list[str], keep: int) -> int:
    """Delete all but the latest ``keep`` checkpoints (and their writes) of each namespace of each thread.

    Returns how many checkpoints were deleted.
    """
    removed = 0
    with saver.cursor() as cur:
        for thread_id in thread_ids:
            namespaces = [
                row[0]
                for row in cur.execute(
                    "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ?", (thread_id,)
                )
            ]
            for namespace in namespaces:
                kept = (
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                    "ORDER BY checkpoint_id DESC LIMIT ?"
                )
                params = (thread_id, namespace, thread_id, namespace, keep)
                cur.execute(
                    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                    f"AND checkpoint_id NOT IN ({kept})",
                    params,
                )
                removed += cur.rowcount
                cur.execute(
                    f"DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id NOT IN ({kept})",
                    params,
                )
    return removed


def reclaim_space(saver: SqliteSaver) -> None:
    """Give freed pages back to the file system (deleted rows otherwise keep the file large)."""
    with saver.lock:
        conn: sqlite3.Connection = saver.conn
        conn.commit()
        conn.execute("VACUUM")
        # In WAL mode VACUUM's result sits in the log until a checkpoint copies it back.
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
