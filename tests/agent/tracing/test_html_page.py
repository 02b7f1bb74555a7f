"""The self-contained HTML page of a run, checked as text and rendered in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from agent.tracing import RunTrace
from agent.tracing.html_page import render_html, write_html

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_page_loads_nothing_from_outside(falcon_trace: RunTrace) -> None:
    page = render_html(falcon_trace)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script" not in page and "@import" not in page


def test_page_highlights_visited_nodes_and_taken_edges(retry_trace: RunTrace) -> None:
    page = render_html(retry_trace)
    visited = set(re.findall(r'<g class="node visited" data-node="([^"]+)"', page))
    assert visited == {"__start__", "start_turn", "retrieve", "grade", "generate", "__end__"}
    taken = set(re.findall(r'class="edge taken" data-source="([^"]+)" data-target="([^"]+)"', page))
    assert ("grade", "retrieve") in taken and ("grade", "generate") in taken
    assert ">×2<" in page  # retrieve and grade ran twice


def test_unvisited_nodes_are_not_highlighted(falcon_trace: RunTrace) -> None:
    page = render_html(falcon_trace)
    taken = set(re.findall(r'class="edge taken" data-source="([^"]+)" data-target="([^"]+)"', page))
    assert ("grade", "retrieve") not in taken
    assert re.search(r'class="edge" data-source="grade" data-target="retrieve"', page)


def test_mermaid_text_styles_the_visited_nodes(falcon_trace: RunTrace) -> None:
    page = render_html(falcon_trace)
    assert "class start_turn,retrieve,grade,generate visited;" in page


def test_run_without_stored_topology_draws_its_path(falcon_trace: RunTrace) -> None:
    page = render_html(falcon_trace.model_copy(update={"graph": None}))
    assert set(re.findall(r'<g class="node visited" data-node="([^"]+)"', page)) >= {"retrieve", "generate"}


def test_text_from_documents_is_escaped(falcon_trace: RunTrace) -> None:
    hostile = falcon_trace.model_copy(update={"question": "<img src=x onerror=alert(1)>"})
    page = render_html(hostile)
    assert "<img src=x" not in page and "&lt;img src=x" in page


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian package 'chromium' not installed")
def test_page_renders_in_headless_chromium_with_every_step(tmp_path: Path, retry_trace: RunTrace) -> None:
    page = write_html(retry_trace, tmp_path / "run.html")
    screenshot = tmp_path / "run.png"
    with tempfile.TemporaryDirectory() as profile:
        base = [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--window-size=1200,1400",
        ]
        dom = subprocess.run(
            [*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True
        ).stdout
        subprocess.run(
            [*base, f"--screenshot={screenshot}", page.as_uri()], capture_output=True, timeout=120, check=True
        )
    # The DOM Chromium built (not our string) holds each step in order, the waterfall and the drawing.
    steps = re.findall(r'<li class="step" id="step-(\d+)" data-node="([^"]+)"', dom)
    assert steps == [(str(i + 1), n) for i, n in enumerate(retry_trace.path)]
    assert dom.count('class="wf-row"') == len(retry_trace.steps)
    assert "<svg" in dom and 'class="node visited" data-node="grade"' in dom
    assert "The sources do not say." in dom
    png = screenshot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 30_000  # a blank page of this size is under 8 kB
