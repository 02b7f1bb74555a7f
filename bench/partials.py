"""Where a resumable benchmark keeps what it has finished: one ignored folder, never ``bench/results/``.

A run appends each finished item to ``.ragpilot-bench/partial/<name>.partial.jsonl`` and resumes from it;
only the finished JSON goes to ``bench/results/``, so that folder holds results and nothing half-done.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

PARTIALS = Path(__file__).resolve().parent.parent / ".ragpilot-bench" / "partial"
RESULTS = Path(__file__).resolve().parent / "results"


def partial_path(name: str) -> Path:
    """The partial file of the run ``name`` (its folder created)."""
    PARTIALS.mkdir(parents=True, exist_ok=True)
    return PARTIALS / f"{name}.partial.jsonl"


def finished_rows(partial: Path, key: str = "question") -> dict[str, dict[str, Any]]:
    """The rows a resumed run has already finished, by ``key``."""
    if not partial.is_file():
        return {}
    return {row[key]: row for row in map(json.loads, partial.read_text("utf-8").splitlines()) if row}


def append_row(partial: Path, row: dict[str, Any]) -> None:
    """Keep one finished row (a line of JSON), so an interrupted run resumes after it."""
    with partial.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")


def save_result(out: str, result: dict[str, Any]) -> Path:
    """Write the finished run's JSON to ``bench/results/<out>``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / out
    path.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return path


def save_run(
    out: str, script: str, by_kind: dict[str, Any], rows: list[dict[str, Any]], **facts: Any
) -> None:
    """Save a finished paired run (its summary per kind, the load average, the command, every row) to
    ``bench/results/<out>`` and print the summary."""
    result = {
        **facts,
        "by_kind": by_kind,
        "load_average": os.getloadavg(),
        "command": f"python -m {script} " + " ".join(sys.argv[1:]),
        "rows": rows,
    }
    save_result(out, result)
    print(json.dumps(by_kind, ensure_ascii=False, indent=1))
