"""``JsonLinesPrinter``: the ``ask --trace --json`` output — one JSON object per step, the answer last."""

from __future__ import annotations

import json
import sys
from typing import IO

from agent.tracing.events import RunStarted, RunTrace, StepEvent


class JsonLinesPrinter:
    """A ``TraceSink`` writing each step event as one JSON line, then the bare answer object.

    The last line is exactly what ``ragpilot ask --json`` prints (``Answer.model_dump``), so a consumer
    can read ``lines[-1]`` either way; a failed run ends with ``{"type": "error", ...}`` instead.
    """

    def __init__(self, stream: IO[str] | None = None, *, include_answer: bool = True) -> None:
        """``include_answer=False`` leaves the last line to the caller (``ask`` prints it itself)."""
        self.stream = stream or sys.stdout
        self.include_answer = include_answer

    def _emit(self, payload: dict) -> None:
        self.stream.write(json.dumps(payload, ensure_ascii=False) + "\n")
        self.stream.flush()

    def on_run_started(self, header: RunStarted) -> None:
        """The header is in the stored file; stdout carries steps and the answer only."""

    def on_step(self, step: StepEvent) -> None:
        self._emit(step.model_dump(mode="json"))

    def on_run_finished(self, trace: RunTrace) -> None:
        if not self.include_answer:
            return
        if trace.answer is not None:
            self._emit(trace.answer)
        else:
            self._emit({"type": "error", "run_id": trace.run_id, "error": trace.error})
