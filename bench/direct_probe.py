"""Does the direct route's knowledge-base probe tell questions the documents answer from those they don't?

``route_question`` checks every 'direct' verdict (a question the classifier would answer from the
model's memory) with one search and rerank: when a passage scores above ``graph.crag_upper`` the
question retrieves instead. This script runs that probe (``probe_knowledge_base``, the shipped
function) over one knowledge base holding the follow-up benchmark's ten documents and the bundled
samples, for two sets of questions:

- **document questions** (should retrieve): the 42 turn-1 questions of ``bench/follow_ups``, each about
  one of those documents ("How long does the apple cake bake?" went 'direct' and was answered from
  memory in the follow-up run);
- **direct questions** (should stay direct): the 89 greetings, arithmetic, general-knowledge questions
  and tasks of ``bench/data/direct_questions.jsonl``, none about the documents.

It reports, at the shipped threshold and on a grid, the share of each set that escalates, the ROC AUC
of the probe score, and the probe's latency. Nothing is tuned here: the threshold is CRAG's
(``bench/crag_thresholds.py`` calibrated it on SQuAD / CMRC).

``--questions paraphrased`` swaps both sets for ``bench/data/direct_probe_paraphrased.jsonl``: document
questions in a user's words rather than the documents' (short, personal, asked in the other language
than the document), beside fresh non-document questions, each on a calibration or report split. Each
row then also holds the router's verdict (only a 'direct' verdict is probed in the graph) and the best
dense cosine among the probe's candidates (the multilingual embedder, read across languages).

    .venv/bin/python -m bench.direct_probe        # saves bench/results/direct_probe.json
    .venv/bin/python -m bench.direct_probe --questions paraphrased --out direct_probe_paraphrased.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from core.settings import load_settings  # noqa: E402
from graphs.rag.inspection import is_a_question  # noqa: E402
from graphs.rag.nodes.route_question import probe_knowledge_base  # noqa: E402
from graphs.rag.resources import Resources  # noqa: E402
from tools.knowledge_base.ingest import ingest  # noqa: E402

RESULTS = REPO / "bench" / "results"
GRID = (0.3, 0.4, 0.5, 0.52, 0.6, 0.7, 0.8)


def document_questions() -> list[dict[str, Any]]:
    conversations = json.loads((REPO / "bench" / "follow_ups" / "conversations.json").read_text("utf-8"))
    return [{"question": c["turn1"], "language": c["language"], "kind": "document"} for c in conversations]


def direct_questions() -> list[dict[str, Any]]:
    lines = (REPO / "bench" / "data" / "direct_questions.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def paraphrased_questions() -> list[dict[str, Any]]:
    lines = (REPO / "bench" / "data" / "direct_probe_paraphrased.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def best_dense_cosine(question: str, resources: Resources) -> float:
    """The best dense-leg score among the probe's candidates (0 when the dense leg found none)."""
    groups = list(resources.options.default_groups)
    candidates = resources.search([question], groups, resources.options.rerank_candidates)
    dense = [leg.score for hit in candidates for name, leg in hit.legs.items() if name.startswith("dense")]
    return round(max(dense, default=0.0), 4)


def roc_auc(positives: list[float], negatives: list[float]) -> float:
    """P(a random positive scores above a random negative), ties counting half."""
    pairs = [(p > n) + 0.5 * (p == n) for p in positives for n in negatives]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def share(scores: list[float], threshold: float) -> float:
    return round(sum(s > threshold for s in scores) / len(scores), 4) if scores else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="direct_probe.json")
    parser.add_argument("--questions", choices=("benchmark", "paraphrased"), default="benchmark")
    args = parser.parse_args()
    paraphrased = args.questions == "paraphrased"
    questions = paraphrased_questions() if paraphrased else document_questions() + direct_questions()

    with tempfile.TemporaryDirectory(prefix="ragpilot-direct-probe-") as home:
        settings = load_settings(home=Path(home))
        report = ingest([REPO / "bench" / "follow_ups" / "docs", REPO / "samples"], settings, progress=False)
        resources = Resources(settings)
        rows: list[dict[str, Any]] = []
        for item in questions:
            question = item["question"]
            started = time.perf_counter()
            escalated, probe = probe_knowledge_base(
                question, list(resources.options.default_groups), resources
            )
            row = {
                **item,
                "asks_a_question": is_a_question(question),
                "score": probe.get("best_score", 0.0),
                "best_passage": probe.get("best_passage", {}).get("title"),
                "escalates": escalated is not None,
                "ms": round((time.perf_counter() - started) * 1000, 1),
            }
            if paraphrased:
                verdict = resources.classifier.classify(question)
                row.update(
                    classifier_route=verdict.route,
                    classifier_confidence=round(verdict.confidence, 4),
                    dense_cosine=best_dense_cosine(question, resources),
                )
            rows.append(row)
        resources.close()

    upper = settings.graph.crag_upper
    # The node probes only messages that ask something: a greeting without a question word stays direct.
    probed = [r for r in rows if r["asks_a_question"]]
    positives = [r["score"] for r in probed if r["kind"] == "document"]
    negatives = [r["score"] for r in probed if r["kind"] != "document"]
    by_kind = {
        kind: {
            "questions": sum(r["kind"] == kind for r in rows),
            "escalated": round(
                sum(r["escalates"] and r["asks_a_question"] for r in rows if r["kind"] == kind)
                / max(1, sum(r["kind"] == kind for r in rows)),
                4,
            ),
        }
        for kind in sorted({r["kind"] for r in rows})
    }
    result = {
        "knowledge_base": {"files": report.files, "chunks": report.chunks_written},
        "threshold": upper,
        "document_questions_escalated": share(positives, upper),
        "direct_questions_escalated": round(
            sum(r["escalates"] and r["asks_a_question"] for r in rows if r["kind"] != "document")
            / max(1, sum(r["kind"] != "document" for r in rows)),
            4,
        ),
        "by_kind": by_kind,
        "roc_auc": round(roc_auc(positives, negatives), 4),
        "grid": {str(t): {"document": share(positives, t), "direct": share(negatives, t)} for t in GRID},
        "latency_ms": {
            "p50": round(statistics.median(r["ms"] for r in probed), 1),
            "p95": round(sorted(r["ms"] for r in probed)[int(0.95 * (len(probed) - 1))], 1),
        },
        "load_average": os.getloadavg(),
        "missed_document_questions": [r for r in rows if r["kind"] == "document" and not r["escalates"]],
        "escalated_direct_questions": [
            r for r in rows if r["kind"] != "document" and r["escalates"] and r["asks_a_question"]
        ],
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(
        f"threshold {upper}: document questions escalated {result['document_questions_escalated']:.2f}, "
        f"direct questions escalated {result['direct_questions_escalated']:.2f}, AUC {result['roc_auc']:.3f}, "
        f"probe p50 {result['latency_ms']['p50']} ms"
    )
    for kind, facts in by_kind.items():
        print(f"  {kind:12s} {facts['questions']:3d} questions, escalated {facts['escalated']:.2f}")
    for r in result["missed_document_questions"] + result["escalated_direct_questions"]:
        print(f"  {r['kind']:10s} {r['score']:.3f}  {r['question']}  -> {r['best_passage']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
