"""Shared test setup.

Tests run fully offline with the real local models. The 1.1 GB GGUF is assembled once per machine into
the user's model cache (the default), shared by every temporary data directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

# Never reach for a model hub, whatever a library might try.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Hosted providers are only ever tested against fake servers on 127.0.0.1.
for _key in ("OPENAI_API_KEY", "COHERE_API_KEY", "TAVILY_API_KEY", "QDRANT_URL", "QDRANT_API_KEY"):
    os.environ.pop(_key, None)


@pytest.fixture
def ragpilot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty data directory for one test."""
    home = tmp_path / "ragpilot-home"
    monkeypatch.setenv("RAGPILOT_HOME", str(home))
    monkeypatch.chdir(tmp_path)  # no stray ragpilot.toml from the repo root
    return home


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The public benchmark sets (``agent/eval/shared_data.py``). Absent, the tests that read them fail
    with one message saying where to put them, rather than skip: the quality gate must run."""
    from agent.eval.shared_data import require_shared_data
    from core.errors import ConfigError

    try:
        return require_shared_data()
    except ConfigError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def postgres_server():  # type: ignore[no-untyped-def]
    """One real PostgreSQL server for the whole run (tests/servers/postgres.py); each test that needs a
    database makes its own with ``postgres_server.new_database()``."""
    from tests.servers.postgres import PostgresServer, postgres_bin_dir

    if postgres_bin_dir() is None:
        pytest.skip("PostgreSQL server binaries are not installed (scripts/test.sh installs them)")
    with PostgresServer() as server:
        yield server


@pytest.fixture(scope="session")
def llama_server():  # type: ignore[no-untyped-def]
    """llama.cpp's OpenAI-compatible server on 127.0.0.1 with the bundled GGUF, for the whole run
    (tests/servers/llama_server.py)."""
    from core.settings import load_settings
    from tests.servers.llama_server import LlamaCppServer
    from tools.providers.local_gguf import ensure_local_gguf

    with LlamaCppServer(ensure_local_gguf(load_settings())) as server:
        yield server
