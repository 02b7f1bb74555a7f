"""``kill -9`` during ``ragpilot ingest``, at five points of a run: each time the next run converges to
exactly what one clean run stores (the same documents, versions and chunk counts, the same number of
points, nothing uncommitted left over). Slow: about a dozen ingest processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.settings import load_settings
from tests.tools.knowledge_base.test_ingest import all_points
from tools.knowledge_base.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.slow

KILL_AFTER_S = [0.5, 1.5, 2.5, 3.5, 5.0]  # from process start: model load, first batches, mid-run, late


def write_corpus(directory: Path, files: int = 40) -> Path:
    directory.mkdir(parents=True)
    for i in range(files):
        paragraphs = [
            f"Section {j} of report {i}: the logistics team measured {i * 7 + j} routing requests per "
            f"second on line {j}, and the median latency stayed under {20 + j} milliseconds."
            for j in range(12)
        ]
        (directory / f"report-{i:02d}.md").write_text(f"# Report {i}\n\n" + "\n\n".join(paragraphs) + "\n")
    return directory


def start_ingest(home: Path, corpus: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "RAGPILOT_HOME": str(home)}
    command = [sys.executable, "-c", "from agent.cli import app; app()", "ingest", str(corpus)]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def ingest_to_the_end(home: Path, corpus: Path) -> None:
    process = start_ingest(home, corpus)
    _, stderr = process.communicate(timeout=900)
    assert process.returncode == 0, stderr.decode()[-2000:]


def stored(home: Path) -> tuple[dict[str, tuple[str, str, int]], int, int]:
    """(documents as doc_id -> (content hash, version, chunks), visible points, all points)."""
    with KnowledgeBase.open(load_settings(home=home)) as kb:
        documents = {d: (s.content_hash, s.doc_version, s.chunks) for d, s in kb.store.documents().items()}
        return documents, kb.store.count(), all_points(kb.store)


def test_each_kill_9_mid_ingest_converges_to_the_clean_result(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs")
    clean_home = tmp_path / "clean"
    ingest_to_the_end(clean_home, corpus)
    clean_documents, clean_visible, clean_points = stored(clean_home)
    assert len(clean_documents) == 40 and clean_visible == clean_points

    killed_mid_run = 0
    for number, delay in enumerate(KILL_AFTER_S):
        home = tmp_path / f"killed-{number}"
        process = start_ingest(home, corpus)
        time.sleep(delay)
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            killed_mid_run += 1
        process.wait(timeout=60)
        ingest_to_the_end(home, corpus)  # the next run recovers what the killed one left
        documents, visible, points = stored(home)
        assert documents.keys() == clean_documents.keys(), f"kill after {delay} s"
        assert {d: (h, n) for d, (h, _, n) in documents.items()} == {
            d: (h, n) for d, (h, _, n) in clean_documents.items()
        }, f"kill after {delay} s"
        assert visible == clean_visible and points == clean_points, f"kill after {delay} s"
    assert killed_mid_run >= 4  # the kills landed while ingest was running
