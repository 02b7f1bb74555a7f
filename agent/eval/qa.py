"""Answer-quality evaluation (``ragpilot eval qa``): a benchmark's questions through the whole agent.

A knowledge base is built from the dataset's own passages (see ``agent/eval/datasets.py``) in a
collection named after the dataset and the selected passages, inside the evaluation data directory
(``--home``; the local model cache stays where the normal settings keep it). Every question then runs
through ``Agent.ask`` with the requested route, and each answer is scored.

What is computed
----------------
The answer metrics (normalisation, em, f1, contained, recall) are defined in ``agent/eval/answer_metrics.py``.

- per route taken: question count, LLM calls per question, latency p50/p95 (``Answer.total_ms``,
  wall clock of the whole graph run including model loading for the first question).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent.eval.answer_metrics import (
    answer_contained,
    best_sentence_f1,
    exact_match,
    recall_of,
    reference_answers,
    strip_citations,
    token_f1,
)
from agent.eval.datasets import QADataset, QAExample, QAFormat, load_qa_dataset
from agent.eval.retrieval import LatencyStats, default_bench_home
from core.errors import ConfigError, ModelAssetError
from core.settings import Settings, load_settings
from core.vocabulary import SUPPORT_LABELS, RouteRequest

DEFAULT_RECALL_K = 10

# --- reports ---------------------------------------------------------------------------------------


class QAEvalConfig(BaseModel):
    dataset: Path
    format: QAFormat
    limit: int | None = Field(None, ge=1)
    sample_seed: int | None = None
    route: RouteRequest = "auto"
    negative_only: bool = False
    qids: list[str] | None = Field(
        None, description="only these of the selected questions (the same index: the passages stay)"
    )
    recall_k: int = Field(DEFAULT_RECALL_K, ge=1, le=100)


class QuestionResult(BaseModel):
    """One question's answer and scores."""

    qid: str
    question: str
    language: str
    kind: str | None = None
    gold: list[list[str]]
    answer: str = ""
    short_answer: str = ""
    route: str | None = None
    refused: bool = False
    refusal_reason: str | None = None
    crag_action: str | None = None
    em: float = 0.0
    f1: float = 0.0
    f1_best_sentence: float = 0.0
    f1_full_text: float = 0.0
    contained: bool = False
    answerable: bool = True
    outcome_correct: bool = Field(
        False, description="answerable: not refused and the gold answer stated; unanswerable: refused"
    )
    supporting_recall: float | None = None
    cited_recall: float | None = None
    retrieved_titles: list[str] = Field(default_factory=list, description="first k distinct documents")
    support_verdicts: dict[str, int] = Field(default_factory=dict)
    shown_verdicts: dict[str, int] = Field(
        default_factory=dict,
        description="verdicts of the sentences the answer shows (none removed or trimmed)",
    )
    shown_sentences: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the sentences the answer shows, without markers, each with the doc_ids it cites",
    )
    last_judgement: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the last support check's verdict per sentence (the draft a refusal threw away, too)",
    )
    checks_fired: list[str] = Field(
        default_factory=list,
        description="answer checks that found a fault in any draft of the run (what switching one off can change)",
    )
    not_found_masked: int = Field(
        0,
        description="answer calls whose unlikely NOT_FOUND gave way to an answer (graph.not_found_min_probability)",
    )
    citations_repointed: int = Field(
        0,
        description="answer sentences whose citation was pointed at another passage (graph.repoint_citations)",
    )
    llm_calls: int = 0
    total_ms: float = 0.0
    error: str | None = None


class RouteStats(BaseModel):
    questions: int
    share: float
    llm_calls_per_question: float
    latency: LatencyStats
    contained: float
    f1: float


class QAReport(BaseModel):
    dataset: str
    format: str
    path: str
    questions: int
    route_request: str
    negative_only: bool
    sample_seed: int | None
    recall_k: int
    index_documents: int
    index_points: int
    collection: str
    llm: str
    crag_thresholds: dict[str, float] | None = Field(
        None, description="graph.crag_upper / crag_lower of the run (they decide CRAG's refusals)"
    )
    metrics: dict[str, float] = Field(description="means over all questions (see the module docstring)")
    support: dict[str, float]
    routes: dict[str, RouteStats]
    refusal_reasons: dict[str, int] = Field(
        default_factory=dict, description="why refused questions were refused (counts by reason)"
    )
    llm_calls_per_question: float
    latency: LatencyStats
    errors: int
    seconds: float
    ingest: dict[str, Any] | None = None
    results: list[QuestionResult] = Field(default_factory=list)
    skipped_questions: list[str] = Field(
        default_factory=list, description="selected questions not run (no question text), each with why"
    )


# --- running ---------------------------------------------------------------------------------------


def qa_collection_name(dataset: QADataset) -> str:
    """A collection per (dataset, selected passages): runs over the same selection share one index."""
    digest = hashlib.sha256()
    for passage in sorted(dataset.passages, key=lambda p: p.doc_id):
        digest.update(passage.doc_id.encode())
    slug = re.sub(r"[^A-Za-z0-9]+", "_", dataset.name)[:24].strip("_") or "data"
    suffix = "_neg" if dataset.negative_only else ""
    return f"qa_{dataset.format}_{slug}{suffix}_{digest.hexdigest()[:10]}"


def qa_settings(dataset: QADataset, home: Path | None = None, **overrides: Any) -> Settings:
    """Settings of an evaluation run: the dataset's collection in ``home``, no web search (the
    benchmark measures the knowledge base), and the model cache of the normal settings, so the 1.1 GB
    local GGUF is not assembled again per evaluation directory."""
    normal = load_settings()
    return load_settings(
        home=home or default_bench_home(),
        models_dir=normal.model_cache_dir.absolute(),
        qdrant={"collection": qa_collection_name(dataset)},
        web={"provider": "none"},
        **overrides,
    )


def write_corpus(dataset: QADataset, directory: Path) -> Path:
    """The passages as a BEIR-style ``corpus.jsonl`` (``_id``, ``title``, ``text``) for ``ingest``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "corpus.jsonl"
    lines = [
        json.dumps({"_id": p.doc_id, "title": p.title, "text": p.text}, ensure_ascii=False)
        for p in dataset.passages
    ]
    content = "\n".join(lines) + "\n"
    if not path.is_file() or path.read_text(encoding="utf-8") != content:
        path.write_text(content, encoding="utf-8")
    return path


def retrieved_titles(steps: Sequence[dict[str, Any]], k: int) -> list[str]:
    """The first ``k`` distinct document titles retrieved, over every ``retrieve`` step in order."""
    titles: list[str] = []
    for step in steps:
        if step.get("node") != "retrieve":
            continue
        for hit in (step.get("decision") or {}).get("hits") or []:
            title = hit.get("title") or ""
            if title and title not in titles:
                titles.append(title)
    return titles[:k]


def last_judgement(steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The verdicts of the run's last support check, each with its sentence and citations."""
    for step in reversed(steps):
        if step.get("node") == "check_support":
            return list((step.get("decision") or {}).get("verdicts") or [])
    return []


def checks_fired(steps: Sequence[dict[str, Any]]) -> list[str]:
    """The answer checks that found a fault in any draft the run checked, by name (``ANSWER_CHECK_NAMES``).

    The two verdict-adjusting checks count when they applied: a sentence citing nothing ("uncited"), a
    sentence with an unstated number ("unstated_numbers"). A check that never fired on a question cannot
    change that question's run when it is switched off, which is what lets the ablation bench rerun only
    the questions a check fired on."""
    fired: set[str] = set()
    for step in steps:
        if step.get("node") != "check_support":
            continue
        decision = step.get("decision") or {}
        fired.update(f["check"] for f in decision.get("failed_checks") or [])
        if decision.get("unstated_numbers"):
            fired.add("unstated_numbers")
        if any(not v.get("citations") for v in decision.get("verdicts") or []):
            fired.add("uncited")
    return sorted(fired)


def not_found_masked(steps: Sequence[dict[str, Any]]) -> int:
    """How many answer calls had their unlikely NOT_FOUND masked: a run where it is 0 is the same run with
    ``graph.not_found_min_probability`` off, so a comparison reruns only the others."""
    return sum(1 for step in steps if (step.get("decision") or {}).get("not_found_masked") is True)


def citations_repointed(steps: Sequence[dict[str, Any]]) -> int:
    """How many sentences had their citation pointed at another passage: a run where it is 0 is the same
    run with ``graph.repoint_citations`` off."""
    return sum(len((step.get("decision") or {}).get("citations_repointed") or []) for step in steps)


def shown_sentences(answer: Any) -> list[dict[str, Any]]:
    """What the answer shows, sentence by sentence, with the documents each cites (for an evaluator)."""
    if answer.refused:
        return []
    doc_of = {c.n: c.doc_id for c in answer.citations}
    return [
        {"sentence": strip_citations(v.sentence), "doc_ids": [doc_of[n] for n in v.citations if n in doc_of]}
        for v in answer.support
        if not (v.removed or v.trimmed)
    ]


def score_answer(
    example: QAExample, answer: Any, steps: Sequence[dict[str, Any]], recall_k: int
) -> QuestionResult:
    """Score one agent ``Answer`` (with the run's step entries) against the example's gold."""
    full_text = "" if answer.refused else strip_citations(answer.shown_text())
    short = "" if answer.refused else strip_citations(answer.short_answer or answer.answer)
    golds = reference_answers(example.answers)
    language = example.language
    result = QuestionResult(
        qid=example.qid,
        question=example.question,
        language=language,
        kind=example.kind,
        gold=example.answers,
        answer=answer.answer,
        short_answer=answer.short_answer,
        route=answer.route,
        refused=answer.refused,
        refusal_reason=answer.refusal_reason if answer.refused else None,
        crag_action=answer.crag_action,
        em=exact_match(short, golds, language),
        f1=round(token_f1(short, golds, language), 4),
        f1_best_sentence=round(best_sentence_f1(full_text, golds, language), 4) if full_text else 0.0,
        f1_full_text=round(token_f1(full_text, golds, language), 4),
        contained=bool(full_text) and answer_contained(full_text, example.answers, language),
        answerable=example.answerable,
        support_verdicts=dict(Counter(v.verdict for v in answer.support)),
        shown_verdicts=dict(
            Counter(v.verdict for v in answer.support if not (v.removed or v.trimmed or answer.refused))
        ),
        shown_sentences=shown_sentences(answer),
        last_judgement=last_judgement(steps),
        checks_fired=checks_fired(steps),
        not_found_masked=not_found_masked(steps),
        citations_repointed=citations_repointed(steps),
        llm_calls=answer.llm_calls,
        total_ms=answer.total_ms,
    )
    result.outcome_correct = result.contained if example.answerable else answer.refused
    if example.gold_titles:
        titles = retrieved_titles(steps, recall_k)
        result.retrieved_titles = titles
        result.supporting_recall = round(recall_of(example.gold_titles, titles), 4)
        result.cited_recall = round(recall_of(example.gold_titles, [c.title for c in answer.citations]), 4)
    return result


def summarize(
    config: QAEvalConfig, dataset: QADataset, results: list[QuestionResult], **facts: Any
) -> QAReport:
    """Aggregate per-question results into the report (means, support shares, per-route stats)."""
    n = max(len(results), 1)

    def mean(values: Sequence[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 0.0

    metrics = {
        "em": mean([r.em for r in results]),
        "f1": mean([r.f1 for r in results]),
        "f1_best_sentence": mean([r.f1_best_sentence for r in results]),
        "f1_full_text": mean([r.f1_full_text for r in results]),
        "short_answer_share": mean([float(bool(r.short_answer)) for r in results]),
        "contained": mean([float(r.contained) for r in results]),
        "refusal_rate": mean([float(r.refused) for r in results]),
    }
    recalls = [r.supporting_recall for r in results if r.supporting_recall is not None]
    if recalls:
        metrics[f"supporting_recall@{config.recall_k}"] = mean(recalls)
        metrics["cited_recall"] = mean([r.cited_recall or 0.0 for r in results if r.cited_recall is not None])
    if dataset.negative_only:
        metrics["rejection_rate"] = metrics["refusal_rate"]
    answerable = [r for r in results if r.answerable]
    unanswerable = [r for r in results if not r.answerable]
    if unanswerable:  # a mixed set: the objective that neither refusing nor answering everything games
        metrics["outcome_accuracy"] = mean([float(r.outcome_correct) for r in results])
        metrics["refused_answerable"] = mean([float(r.refused) for r in answerable])
        metrics["answered_unanswerable"] = mean([float(not r.refused) for r in unanswerable])
        metrics["answerable_share"] = round(len(answerable) / n, 4)

    verdicts: Counter[str] = Counter()
    for r in results:
        verdicts.update(r.support_verdicts)
    sentences = sum(verdicts.values())
    # "stated" is code's finding, not a judge's verdict.
    judged = sentences - verdicts["unchecked"] - verdicts["stated"]
    support = {f"{label}_share": round(verdicts[label] / sentences, 4) if sentences else 0.0
               for label in SUPPORT_LABELS}  # fmt: skip
    support["supported_share"] = round(verdicts["fully"] / judged, 4) if judged else 0.0
    support["sentences"] = float(sentences)

    by_route: dict[str, list[QuestionResult]] = defaultdict(list)
    for r in results:
        by_route[r.route or "none"].append(r)
    routes = {
        route: RouteStats(
            questions=len(rs),
            share=round(len(rs) / n, 4),
            llm_calls_per_question=mean([float(r.llm_calls) for r in rs]),
            latency=LatencyStats.of([r.total_ms / 1000.0 for r in rs]),
            contained=mean([float(r.contained) for r in rs]),
            f1=mean([r.f1 for r in rs]),
        )
        for route, rs in sorted(by_route.items())
    }
    return QAReport(
        dataset=dataset.name,
        format=dataset.format,
        path=str(dataset.path),
        questions=len(results),
        route_request=config.route,
        negative_only=dataset.negative_only,
        sample_seed=config.sample_seed,
        recall_k=config.recall_k,
        metrics=metrics,
        support=support,
        routes=routes,
        refusal_reasons=dict(
            Counter(
                re.sub(r"\d+", "N", r.refusal_reason or "unknown") for r in results if r.refused
            ).most_common()
        ),
        llm_calls_per_question=mean([float(r.llm_calls) for r in results]),
        latency=LatencyStats.of([r.total_ms / 1000.0 for r in results]),
        errors=sum(1 for r in results if r.error),
        results=results,
        skipped_questions=dataset.skipped,
        **facts,
    )


def run_qa_eval(
    config: QAEvalConfig,
    settings: Settings | None = None,
    *,
    home: Path | None = None,
    progress: bool = True,
    on_result: Callable[[QuestionResult], None] | None = None,
    done: Sequence[QuestionResult] = (),
    answerer: Callable[[str, Any], Any] | None = None,
) -> QAReport:
    """Index the dataset's passages, run every selected question through the agent and score it.

    ``answerer(question, resources) -> Answer`` replaces the agent (a peer system measured on the same
    index and scored the same way; it reports no steps).

    ``done`` holds results of an interrupted earlier run of the same config: those questions are not
    run again and their results are reported as they were (a benchmark of hours can resume).

    A question whose run raises is recorded with its ``error`` and scored zero; the run goes on (a
    long benchmark is not lost to one bad question). A broken setup (ConfigError, ModelAssetError:
    every question would fail alike) stops the run with that error.
    """
    from agent.agent import Agent
    from agent.run_loop import FinalAnswer, StepUpdate
    from core.answer import Answer
    from graphs.rag.resources import Resources
    from tools.knowledge_base.ingest import ingest
    from tools.knowledge_base.knowledge_base import KnowledgeBase

    started = time.perf_counter()
    dataset = load_qa_dataset(
        config.dataset, config.format, limit=config.limit, sample_seed=config.sample_seed,
        negative_only=config.negative_only,
    )  # fmt: skip
    if not dataset.passages:
        raise ConfigError(f"{config.dataset}: the selected questions have no passages to index")
    settings = settings or qa_settings(dataset, home)
    if config.qids is not None:
        unknown = sorted(set(config.qids) - {e.qid for e in dataset.examples})
        if unknown:
            raise ConfigError(f"{config.dataset}: no selected question has the id {unknown[0]!r}")
        dataset = dataset.model_copy(
            update={"examples": [e for e in dataset.examples if e.qid in set(config.qids)]}
        )
    corpus = write_corpus(dataset, settings.home / "qa" / settings.qdrant.collection)
    finished = {result.qid: result for result in done}
    results: list[QuestionResult] = [finished[e.qid] for e in dataset.examples if e.qid in finished]
    with KnowledgeBase.open(settings) as kb:
        report = ingest([corpus], settings, prune=True, progress=progress, kb=kb)
        if report.skipped:
            raise ConfigError(f"{corpus}: passages could not be indexed: {report.skipped[0].reason}")
        agent = Agent(settings, resources=Resources(settings, knowledge_base=kb))
        llm_name = _llm_name(settings)
        with _QuestionProgress(enabled=progress, total=len(dataset.examples)) as bar:
            bar.skip(len(results))
            for example in dataset.examples:
                if example.qid in finished:
                    continue
                steps: list[dict[str, Any]] = []
                answer: Answer | None = None
                try:
                    if answerer is not None:
                        answer = answerer(example.question, agent.resources)
                    else:
                        for event in agent.stream(example.question, route=config.route, tokens=False):
                            if isinstance(event, FinalAnswer):
                                answer = event.answer
                            elif isinstance(event, StepUpdate):
                                steps.append(event.step.model_dump())
                except (ConfigError, ModelAssetError):
                    raise  # the setup is broken: every question would fail the same way
                except Exception as exc:  # noqa: BLE001 - recorded per question, see the docstring
                    result = QuestionResult(
                        qid=example.qid, question=example.question, language=example.language,
                        kind=example.kind, gold=example.answers, error=f"{type(exc).__name__}: {exc}",
                    )  # fmt: skip
                else:
                    assert answer is not None
                    result = score_answer(example, answer, steps, config.recall_k)
                results.append(result)
                if on_result:
                    on_result(result)
                bar.advance(results)
        index_documents, index_points = len(kb.store.documents()), kb.store.count()
        agent.close()
    return summarize(
        config, dataset, results,
        index_documents=index_documents, index_points=index_points, collection=settings.qdrant.collection,
        llm=llm_name, seconds=round(time.perf_counter() - started, 1),
        crag_thresholds={"upper": settings.graph.crag_upper, "lower": settings.graph.crag_lower},
        ingest=report.model_dump(mode="json", exclude={"warnings"}) if report.indexed else None,
    )  # fmt: skip


def _llm_name(settings: Settings) -> str:
    provider = settings.llm.provider
    if provider == "auto":
        provider = "openai" if (settings.openai_api_key or settings.llm.base_url) else "local"
    return (
        "local qwen2.5-coder-1.5b-instruct q4_k_m" if provider == "local" else f"openai {settings.llm.model}"
    )


class _QuestionProgress:
    """A rich progress bar on stderr with the running answer accuracy, or nothing."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled, self.total = enabled, total
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _QuestionProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("questions"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                console=Console(stderr=True),
            )  # fmt: skip
            self._progress.__enter__()
            self._task = self._progress.add_task("qa", total=self.total, status="")
        return self

    def skip(self, count: int) -> None:
        """Count questions resumed from an earlier run as done."""
        if self._progress is not None and count:
            self._progress.update(self._task, advance=count, status="resumed")

    def advance(self, results: Sequence[QuestionResult]) -> None:
        if self._progress is None:
            return
        contained = sum(r.contained for r in results) / len(results)
        f1 = sum(r.f1 for r in results) / len(results)
        status = f"contained {contained:.2f} · F1 {f1:.2f} · last route {results[-1].route}"
        self._progress.update(self._task, advance=1, status=status)

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc_info)
