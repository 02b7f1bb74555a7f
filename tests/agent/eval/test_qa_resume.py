"""A QA benchmark interrupted after some questions resumes: finished questions are not run again and
their results are reported as they were."""

from __future__ import annotations

import json
from pathlib import Path

from agent.eval.datasets import load_qa_dataset
from agent.eval.qa import QAEvalConfig, QuestionResult, qa_settings, run_qa_eval


def test_questions_already_done_are_reported_not_rerun(tmp_path: Path, shared_data: Path):
    hotpot = shared_data / "hotpotqa" / "hotpot_dev_distractor_first100.json"
    dataset = load_qa_dataset(hotpot, "hotpot", limit=2)
    done = [
        QuestionResult(
            qid=example.qid,
            question=example.question,
            language="en",
            gold=example.answers,
            answer=f"earlier answer {i}",
            route="single",
            contained=i == 0,
            llm_calls=2,
            total_ms=1000.0 * (i + 1),
        )  # fmt: skip
        for i, example in enumerate(dataset.examples)
    ]
    done.append(done[0].model_copy(update={"qid": "not-in-this-sample"}))  # stale lines are ignored
    rerun: list[QuestionResult] = []

    config = QAEvalConfig(dataset=hotpot, format="hotpot", limit=2, route="single")
    settings = qa_settings(dataset, tmp_path)
    report = run_qa_eval(config, settings, home=tmp_path, progress=False, on_result=rerun.append, done=done)

    assert rerun == []  # nothing ran again: no LLM was needed
    assert [r.answer for r in report.results] == ["earlier answer 0", "earlier answer 1"]
    assert report.questions == 2
    assert report.metrics["contained"] == 0.5
    assert report.latency.p50_ms > 0


def test_a_blank_question_is_reported_as_skipped_not_as_a_failed_run(tmp_path: Path):
    squad = {"data": [{"title": "Alpha", "paragraphs": [{"context": "Alpha was founded in 1900.", "qas": [
        {"id": "q1", "question": "When was Alpha founded?", "answers": [{"text": "1900"}]},
        {"id": "q2", "question": "", "answers": [{"text": "Alpha"}]}]}]}]}  # fmt: skip
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(squad), encoding="utf-8")
    dataset = load_qa_dataset(path, "squad")
    done = [QuestionResult(qid="q1", question="When was Alpha founded?", language="en", gold=[["1900"]],
                           answer="In 1900.", route="single", contained=True, total_ms=500.0)]  # fmt: skip

    config = QAEvalConfig(dataset=path, format="squad", route="single")
    report = run_qa_eval(config, qa_settings(dataset, tmp_path), home=tmp_path, progress=False, done=done)

    assert report.questions == 1
    assert report.errors == 0
    assert report.skipped_questions == ["dev.json: question 'q2' has no question text"]
    assert report.crag_thresholds == {"upper": 0.52, "lower": 0.10}  # the defaults, recorded with the run
