"""``ragpilot chat`` in a real process: steps shown while it works, the answer, numbered sources,
and the /threads, /new and /exit commands (stdin is a pipe, so the step display is a line per step)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.settings import load_settings
from tools.knowledge_base.ingest import ingest

NOTE = """# Falcon service notes

The Falcon service answers routing requests in 40 milliseconds at the median.
"""


@pytest.mark.llm
def test_chat_streams_an_answer_with_sources_and_handles_its_commands(tmp_path: Path) -> None:
    home, docs = tmp_path / "home", tmp_path / "docs"
    docs.mkdir()
    (docs / "falcon.md").write_text(NOTE, encoding="utf-8")
    ingest([docs], load_settings(home=home, rerank={"provider": "none"}), progress=False)

    env = {**os.environ, "RAGPILOT_HOME": str(home), "RAGPILOT_RERANK__PROVIDER": "none"}
    session = "How fast does the Falcon service answer routing requests?\n/threads\n/new\n/bogus\n/exit\n"
    result = subprocess.run(
        [sys.executable, "-c", "from agent.cli import app; app()", "chat", "--thread", "falcon-chat"],
        input=session, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "thread falcon-chat" in out
    # The current step is shown while the graph works, before the answer.
    assert out.index("· start_turn") < out.index("· retrieve") < out.index("40")
    assert "Sources" in out and "[1]" in out and "falcon.md" in out
    # /threads lists this thread (marked current) with its turn; /new starts another; /bogus is refused.
    assert "* falcon-chat" in out and "1 turns" in out
    assert "new thread chat-" in out
    assert "unknown command" in out
