"""A real PostgreSQL server for the tests: ``initdb`` + ``pg_ctl`` in a temporary directory on 127.0.0.1.

Uses the machine's PostgreSQL binaries (Debian's ``postgresql`` package: ``/usr/lib/postgresql/<v>/bin``,
or ``initdb`` on the PATH). PostgreSQL refuses to run as root, so under root the server runs as the
``postgres`` user (``runuser``), in a directory that user owns. Fast settings for throwaway data
(``fsync=off``); one database per test through ``new_database``.

    with PostgresServer() as pg:
        url = pg.new_database("threads")   # postgresql://postgres@127.0.0.1:PORT/threads
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from tests.servers.ports import free_port

START_TIMEOUT_S = 60


def postgres_bin_dir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl`` (newest installed version), or None."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: p.parent.parent.name)
    return versions[-1].parent if versions else None


class PostgresServer:
    """One PostgreSQL server for the life of the ``with`` block; its files are removed afterwards."""

    def __init__(self) -> None:
        bin_dir = postgres_bin_dir()
        if bin_dir is None:
            raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
        self.bin_dir = bin_dir
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="ragpilot-pg-"))  # not under pytest's 0700 tmp tree
        self.data_dir = self.root / "data"
        self._as_postgres = os.geteuid() == 0

    @property
    def base_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}"

    def _run(self, *args: str) -> None:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=START_TIMEOUT_S)
        if result.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({result.returncode}): {result.stderr.strip()}\n{tail}")

    def __enter__(self) -> PostgresServer:
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            "initdb", "-D", str(self.data_dir), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"
        )
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50"
        )
        self._run("pg_ctl", "-D", str(self.data_dir), "-o", options, "-l", str(self.root / "server.log"), "-w",
                  "-t", str(START_TIMEOUT_S), "start")  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def new_database(self, prefix: str = "test") -> str:
        """A new empty database; returns its connection URL."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(f"{self.base_url}/postgres", autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return f"{self.base_url}/{name}"
