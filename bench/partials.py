"""Where a resumable benchmark keeps what it has finished: one ignored folder, never ``bench/results/``.

A run appends each finished item to ``.ragpilot-bench/partial/<name>.partial.jsonl`` and resumes from it;
only the finished JSON goes to ``bench/results/``, so that folder holds results and nothing half-done.
"""

from __future__ import annotations

from pathlib import Path

PARTIALS = Path(__file__).resolve().parent.parent / ".ragpilot-bench" / "partial"


def partial_path(name: str) -> Path:
    """The partial file of the run ``name`` (its folder created)."""
    PARTIALS.mkdir(parents=True, exist_ok=True)
    return PARTIALS / f"{name}.partial.jsonl"
