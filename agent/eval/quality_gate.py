"""The quality gate the test command runs (issue 22, item 6; seed ``001``): a small golden set whose figures
must not drop when chunking, embedding, rerank thresholds, prompts or checks change.

- **Retrieval**: Recall@5 and nDCG@10 of the default search (hybrid + the default reranker) on two
  slices: SciFact test (60 seeded queries, their judged abstracts and 540 seeded other abstracts;
  English, science) and CMRC 2018 trial (60 seeded questions over all 256 paragraphs; Chinese).
- **Answers**: outcome accuracy on a small mixed set (``agent/eval/mixed_set.py``: answerable and
  unanswerable questions, English and Chinese, single- and multi-hop; only questions of the full
  set's *calibration* split, never of its report split) and faithfulness: the share of the sentences shown in
  answers that are grounded in the passages they cite (``agent/eval/faithfulness.py``: every number and
  most words stated there; no model asked, so no path grades itself). The share the graph's own
  support check rated "fully" is kept beside it (``graph_faithfulness``). The knowledge base is the small set's passages
  nearest each question by BM25 (the distractors a retriever would meet, same-article paragraphs
  included) plus what the answerable ones need: ~200 passages instead of 960, so the gate's indexing
  takes seconds while the questions stay as hard.

The figures to hold are stored beside the gate's test (``tests/quality/baseline.json``) with their
tolerance; ``python -m bench.quality_gate --record`` measures and rewrites them (a deliberate act, in
the same commit as the change that moved them).
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.eval.beir_from_qa import derive_beir_set
from agent.eval.datasets import QADataset, QAPassage

SLICE_QUERIES = 60
SCIFACT_DISTRACTORS = 540
GATE_METRICS = ("recall@5", "ndcg@10")
ANSWER_SLICE_SIZES = {"squad": 10, "cmrc": 12, "hotpotqa": 24, "rgb": 16}
ANSWER_QUESTIONS = 16
NEAREST_PASSAGES_PER_QUESTION = 12


class RetrievalFigures(BaseModel):
    queries: int
    documents: int
    metrics: dict[str, float]


class AnswerFigures(BaseModel):
    questions: int
    outcome_accuracy: float
    faithfulness: float
    shown_sentences: int
    graph_faithfulness: float | None = None  # the share the graph's own check rated "fully"
    ungrounded: list[str] = []
    outcomes: dict[str, bool]


def scifact_slice(shared_data: Path, out_dir: Path, *, seed: int = 0) -> Path:
    """A BEIR folder: SLICE_QUERIES SciFact test queries, their judged abstracts and seeded distractors."""
    source = shared_data / "scifact"
    qrels: dict[str, dict[str, int]] = {}
    for line in (source / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query_id, doc_id, score = line.split("\t")
        qrels.setdefault(query_id, {})[doc_id] = int(score)
    chosen = sorted(random.Random(seed).sample(sorted(qrels), SLICE_QUERIES))
    gold = {doc for q in chosen for doc in qrels[q]}
    with gzip.open(source / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        corpus = [json.loads(line) for line in f if line.strip()]
    others = [d for d in corpus if d["_id"] not in gold]
    kept = [d for d in corpus if d["_id"] in gold] + random.Random(seed + 1).sample(
        others, SCIFACT_DISTRACTORS
    )
    (out_dir / "qrels").mkdir(parents=True, exist_ok=True)
    (out_dir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in kept), encoding="utf-8")
    queries = {
        str(r["_id"]): r["text"]
        for r in map(json.loads, (source / "queries.jsonl").read_text(encoding="utf-8").splitlines())
    }
    (out_dir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": queries[q]}) + "\n" for q in chosen), encoding="utf-8"
    )
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q in chosen for d, s in qrels[q].items()]
    (out_dir / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out_dir


def measure_retrieval(shared_data: Path, work_dir: Path) -> dict[str, RetrievalFigures]:
    """The gate's retrieval figures, indexing both slices under ``work_dir``."""
    from ranx import Qrels, evaluate

    from agent.eval.retrieval import RetrievalEvalConfig, eval_settings, load_beir, run_retrieval_eval

    slices = {
        "scifact_slice": scifact_slice(shared_data, work_dir / "scifact_slice"),
        "cmrc_slice": work_dir / "cmrc_slice",
    }
    derive_beir_set("cmrc", shared_data, slices["cmrc_slice"], queries=SLICE_QUERIES, seed=5)
    figures = {}
    for name, beir_dir in slices.items():
        beir = load_beir(beir_dir, "test")
        settings = eval_settings(beir, work_dir / "home")
        report, run = run_retrieval_eval(
            RetrievalEvalConfig(beir_dir=beir_dir, rerank="auto"), settings, progress=False
        )
        scores = evaluate(Qrels(beir.qrels), run, list(GATE_METRICS))
        figures[name] = RetrievalFigures(
            queries=report.queries,
            documents=report.index_documents,
            metrics={m: round(float(scores[m]), 4) for m in GATE_METRICS},
        )
    return figures


def gate_questions(shared_data: Path) -> QADataset:
    """The gate's questions: those of the small mixed set that the full set (``bench.mixed_set``) puts
    in its calibration split, interleaved by source. The split is drawn per set, so the small set's own
    calibration split held 9 of the full set's report questions; the gate must not see those."""
    from agent.eval.mixed_set import build_mixed_set, select_split

    calibration = {e.qid for e in build_mixed_set(shared_data, seed=0).examples if e.split == "calibration"}
    mixed = build_mixed_set(shared_data, seed=0, sizes=ANSWER_SLICE_SIZES)
    mixed = mixed.model_copy(update={"examples": [e for e in mixed.examples if e.qid in calibration]})
    asked = select_split(mixed, "all", limit=ANSWER_QUESTIONS)
    return asked.model_copy(update={"passages": gate_passages(asked)})


def gate_passages(asked: QADataset) -> list[QAPassage]:
    """The passages the gate indexes: for each question, the ``NEAREST_PASSAGES_PER_QUESTION`` passages
    BM25 ranks first for it, plus every passage an answerable question needs (the ones stating its
    answer and, for multi-hop, both supporting paragraphs). An unanswerable question's answer-bearing
    passages were removed from the set already, so none comes back."""
    from rank_bm25 import BM25Okapi

    from agent.eval.mixed_set import states_answer
    from tools.knowledge_base.sparse import tokenize

    passages = asked.passages
    bm25 = BM25Okapi([tokenize(f"{p.title} {p.text}") or ["\u2205"] for p in passages])
    keep: set[int] = set()
    for example in asked.examples:
        scores = bm25.get_scores(tokenize(example.question))
        keep.update(sorted(range(len(passages)), key=lambda i: -scores[i])[:NEAREST_PASSAGES_PER_QUESTION])
        if example.answerable:
            keep.update(
                i for i, p in enumerate(passages)
                if p.title in example.gold_titles or states_answer(p.text, example)
            )  # fmt: skip
    return [p for i, p in enumerate(passages) if i in keep]


def measure_answers(shared_data: Path, work_dir: Path) -> AnswerFigures:
    """The gate's answer figures: ``gate_questions`` through the agent."""
    from agent.eval.faithfulness import ShownSentence, measure_grounding
    from agent.eval.qa import QAEvalConfig, qa_settings, run_qa_eval

    gate_set = gate_questions(shared_data)
    path = work_dir / "answer_gate_set.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(gate_set.model_dump_json(), encoding="utf-8")
    settings = qa_settings(gate_set, work_dir / "home")
    report = run_qa_eval(QAEvalConfig(dataset=path, format="mixed"), settings, progress=False)
    shown = sum(sum(r.shown_verdicts.values()) for r in report.results)
    supported = sum(r.shown_verdicts.get("fully", 0) for r in report.results)
    grounding = measure_grounding(
        ([ShownSentence(**s) for s in r.shown_sentences] for r in report.results),
        {p.doc_id: (p.title, p.text) for p in gate_set.passages},
    )
    return AnswerFigures(
        questions=report.questions,
        outcome_accuracy=report.metrics["outcome_accuracy"],
        faithfulness=grounding.share,
        shown_sentences=grounding.sentences,
        graph_faithfulness=round(supported / shown, 4) if shown else None,
        ungrounded=grounding.ungrounded,
        outcomes={r.qid: r.outcome_correct for r in report.results},
    )


def compare(measured: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """What fell below the baseline beyond its tolerance, one line each (empty: the gate holds)."""
    failures = []
    relative = baseline["tolerance"]["retrieval_relative_drop"]
    for name, stored in baseline["retrieval"].items():
        for metric, value in stored["metrics"].items():
            got = measured["retrieval"][name]["metrics"][metric]
            if got < value * (1 - relative):
                failures.append(f"{name} {metric} {got:.4f} < {value:.4f} - {relative:.0%}")
    answers, floor = measured["answers"], baseline["tolerance"]
    allowed = baseline["answers"]["outcome_accuracy"] - floor["outcome_questions"] / answers["questions"]
    if answers["outcome_accuracy"] < allowed - 1e-9:
        failures.append(
            f"outcome accuracy {answers['outcome_accuracy']:.3f} < {baseline['answers']['outcome_accuracy']:.3f} "
            f"less {floor['outcome_questions']} question(s)"
        )
    if answers["faithfulness"] < floor["faithfulness_floor"]:
        failures.append(f"faithfulness {answers['faithfulness']:.3f} < {floor['faithfulness_floor']:.2f}")
    return failures
