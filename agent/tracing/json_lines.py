"""``JsonLinesPrinter``: the ``ask --trace --json`` output — one JSON object per step, the answer last."""

from __future__ import annotations

import json
import sys
from typing import IO

from agent.tracing.events import RunStarted, RunTrace, StepEvent


class JsonLinesPrinter:
    """A ``TraceSink`` writing each step event as one JSON line, then the bare answer object.

    The last line is exactly what ``ragpilot ask --json`` prints (``Answer.model_dump``), so a consumer
    can read ``lines[-1]`` either way; a failed run ends with ``{"type": "error", "error", "after_step"}``
    instead (with ``include_answer=False`` too: the caller prints only answers).
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
        if trace.answer is None:
            # A failed run (a hosted LLM that stayed down, say) ends the stream with its error, whoever
            # prints the answer: a consumer of the JSON lines sees why, not only stderr.
            last = trace.steps[-1].node if trace.steps else None
            self._emit({"type": "error", "run_id": trace.run_id, "error": trace.error, "after_step": last})
        elif self.include_answer:
            self._emit(trace.answer)
