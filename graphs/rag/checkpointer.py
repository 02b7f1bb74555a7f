"""Where threads are kept: the checkpointer named by ``settings.chat.checkpointer``."""

from __future__ import annotations

import sqlite3
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from core.errors import ConfigError
from core.settings import Settings


def open_checkpointer(settings: Settings) -> BaseCheckpointSaver[Any]:
    """SQLite at ``settings.threads_db`` (default), Postgres at ``chat.postgres_url``, or in memory.

    The SQLite connection is shared across threads (LangGraph serialises access with its own lock).
    """
    kind = settings.chat.checkpointer
    if kind == "memory":
        return InMemorySaver()
    if kind == "postgres":
        if not settings.chat.postgres_url:
            raise ConfigError("chat.checkpointer=postgres needs chat.postgres_url")
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg import Connection
            from psycopg.rows import dict_row
        except ImportError as exc:
            raise ConfigError(
                "chat.checkpointer=postgres needs the 'postgres' extra (pip install 'ragpilot[postgres]')"
            ) from exc
        connection = Connection.connect(
            settings.chat.postgres_url, autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        saver = PostgresSaver(connection)
        saver.setup()
        return saver
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = settings.threads_db
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(connection)
    saver.setup()
    return saver
