"""A saved QA run rescored under today's short-answer rules that need only the question: a yes/no
short answer to a question that does not ask yes or no, and a short answer made of the question's own
words, are dropped (``finalize_answer``). Dropping one changes nothing else the run shows: the shown
sentences are the same with and without it, so the rescored EM/F1 are what the run would score now,
without running it again. The score falls back to the whole answer, as in ``agent.eval.qa``.

    .venv/bin/python -m bench.rescore_short_answers bench/results/qa_squad.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from agent.eval.answer_metrics import exact_match, reference_answers, strip_citations, token_f1
from graphs.rag.inspection import answers_another_question
from tools.knowledge_base.sparse import tokenize


def dropped_now(result: dict[str, Any]) -> bool:
    if result.get("refused"):
        return False
    return answers_another_question(result.get("short_answer") or "", result["question"], tokenize)


def rescore(results: list[dict[str, Any]]) -> dict[str, Any]:
    em, f1, changed = [], [], []
    for result in results:
        if not dropped_now(result):
            em.append(result["em"])
            f1.append(result["f1"])
            continue
        golds, shown = reference_answers(result["gold"]), strip_citations(result["answer"])
        em.append(exact_match(shown, golds, result["language"]))
        f1.append(token_f1(shown, golds, result["language"]))
        changed.append({"question": result["question"], "short_answer": result["short_answer"],
                        "f1": result["f1"], "f1_now": round(f1[-1], 4)})  # fmt: skip
    return {
        "questions": len(results),
        "em": {"saved": round(statistics.mean(r["em"] for r in results), 4), "now": round(statistics.mean(em), 4)},
        "f1": {"saved": round(statistics.mean(r["f1"] for r in results), 4), "now": round(statistics.mean(f1), 4)},
        "short_answers_dropped": changed,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a bench.qa result JSON")
    args = parser.parse_args(argv)
    results = json.loads(args.run.read_text(encoding="utf-8"))["results"]
    print(json.dumps(rescore(results), ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
