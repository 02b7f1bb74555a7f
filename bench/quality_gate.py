"""Measure the quality gate's figures (``agent/eval/quality_gate.py``) and, with ``--record``, store them as
the baseline the test command holds (``tests/quality/baseline.json``).

    .venv/bin/python -m bench.quality_gate            # measure and compare with the baseline
    .venv/bin/python -m bench.quality_gate --record   # measure and make it the baseline
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.eval.quality_gate import compare, measure_answers, measure_retrieval  # noqa: E402
from agent.eval.shared_data import shared_data_dir  # noqa: E402

DATA = shared_data_dir()
BASELINE = ROOT / "tests" / "quality" / "baseline.json"
DEFAULT_TOLERANCE = {"retrieval_relative_drop": 0.02, "outcome_questions": 2, "faithfulness_floor": 0.9}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ragpilot-gate-") as tmp:
        retrieval = {k: v.model_dump() for k, v in measure_retrieval(DATA, Path(tmp)).items()}
        retrieval_done = time.perf_counter()
        measured = {"retrieval": retrieval, "answers": measure_answers(DATA, Path(tmp)).model_dump()}
    finished = time.perf_counter()
    print(json.dumps(measured, indent=1))
    print(
        f"measured in {finished - started:.0f} s (retrieval {retrieval_done - started:.0f} s, "
        f"answers {finished - retrieval_done:.0f} s)",
        file=sys.stderr,
    )
    if args.record:
        tolerance = json.loads(BASELINE.read_text())["tolerance"] if BASELINE.is_file() else DEFAULT_TOLERANCE
        BASELINE.parent.mkdir(parents=True, exist_ok=True)
        BASELINE.write_text(json.dumps({**measured, "tolerance": tolerance}, indent=1) + "\n")
        print(f"recorded {BASELINE}")
    elif BASELINE.is_file():
        failures = compare(measured, json.loads(BASELINE.read_text()))
        print("\n".join(failures) or "the gate holds")


if __name__ == "__main__":
    main()
