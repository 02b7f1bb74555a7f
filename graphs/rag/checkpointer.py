"""Where threads are kept: the checkpointer named by ``settings.chat.checkpointer``."""

from __future__ import annotations

import sqlite3
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from core.errors import ConfigError
from core.settings import Settings

POSTGRES_POOL_SIZE = 4


def open_checkpointer(settings: Settings) -> BaseCheckpointSaver[Any]:
    """SQLite at ``settings.threads_db`` (default), Postgres at ``chat.postgres_url``, or in memory.

    The SQLite connection is shared across threads (LangGraph serialises access with its own lock).
    """
    kind = settings.chat.checkpointer
    if kind == "memory":
        return InMemorySaver()
    if kind == "postgres":
        return _open_postgres(settings)
    return _open_sqlite(settings)


def _open_postgres(settings: Settings) -> BaseCheckpointSaver[Any]:
    """The Postgres saver over a small connection pool (a connection dropped by a database restart is
    replaced, and the server's threads do not queue on one connection); its tables are created (or
    migrated) first, which is safe when several processes start at once."""
    if not settings.chat.postgres_url:
        raise ConfigError("chat.checkpointer=postgres needs chat.postgres_url")
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool
    except ImportError as exc:
        raise ConfigError(
            "chat.checkpointer=postgres needs the 'postgres' extra (pip install 'ragpilot[postgres]')"
        ) from exc
    pool = ConnectionPool(
        settings.chat.postgres_url,
        min_size=1,
        max_size=POSTGRES_POOL_SIZE,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        check=ConnectionPool.check_connection,
        open=True,
    )
    saver = PostgresSaver(pool)  # type: ignore[arg-type]  # a pool of dict-row connections is what it takes
    saver.setup()
    return saver


def _open_sqlite(settings: Settings) -> BaseCheckpointSaver[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = settings.threads_db
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(connection)
    saver.setup()
    return saver
