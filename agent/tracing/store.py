"""The JSONL run store: one file per run under ``settings.traces_dir``, readable back as a ``RunTrace``."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from agent.tracing.events import RUN_ID_PATTERN, TRACE_RECORD, RunFinished, RunStarted, RunTrace, StepEvent
from core.errors import RagpilotError


class TraceError(RagpilotError):
    """A stored run is missing or unreadable; the message names the run id and file."""


class TraceStore:
    """Reads and locates run files. Writing is the recorder's job (``TraceRecorder``)."""

    def __init__(self, traces_dir: Path) -> None:
        self.traces_dir = Path(traces_dir)

    def path_for(self, run_id: str) -> Path:
        """The file of ``run_id``; raises ``TraceError`` for an id that is not a plain name."""
        if not RUN_ID_PATTERN.match(run_id):
            raise TraceError(f"run id {run_id!r} is not valid: letters, digits, '-' and '_' only")
        return self.traces_dir / f"{run_id}.jsonl"

    def load(self, run_id: str) -> RunTrace:
        """Read a stored run. A partly written last line (a run still going, or killed) is ignored."""
        path = self.path_for(run_id)
        if not path.is_file():
            raise TraceError(f"no stored run {run_id!r} (looked for {path})")
        records: list[RunStarted | StepEvent | RunFinished] = []
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                records.append(TRACE_RECORD.validate_python(json.loads(line)))
            except (json.JSONDecodeError, ValidationError) as exc:
                if number == len(lines):  # interrupted while writing the last record
                    break
                raise TraceError(f"{path}: line {number} is not a trace record: {exc}") from exc
        try:
            return RunTrace.from_records(records)
        except ValueError as exc:
            raise TraceError(f"{path}: {exc}") from exc

    def list_run_ids(self, limit: int | None = None) -> list[str]:
        """Stored run ids, newest file first."""
        if not self.traces_dir.is_dir():
            return []
        files = sorted(self.traces_dir.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        ids = [p.stem for p in files]
        return ids[:limit] if limit is not None else ids
