"""``ragpilot eval ...``: measurement commands, one function per benchmark kind (``retrieval``, ...)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from agent.cli.app import AUTO_ROUTE, RouteOption, app, fail
from core.errors import ConfigError, FilterError, ModelAssetError, ProviderUnavailable

eval_app = typer.Typer(name="eval", help="Measure retrieval and answer quality on public benchmarks.",
                       no_args_is_help=True)  # fmt: skip
app.add_typer(eval_app, name="eval")


class EvalModeOption(StrEnum):
    dense = "dense"
    sparse = "sparse"
    hybrid = "hybrid"


class EvalRerankOption(StrEnum):
    none = "none"
    auto = "auto"
    offline = "offline"
    cohere = "cohere"
    cross_encoder = "cross_encoder"


@eval_app.command("retrieval")
def eval_retrieval(
    beir: Annotated[
        Path, typer.Option("--beir", help="a BEIR dataset folder (corpus.jsonl[.gz], queries.jsonl, qrels/)")
    ],
    split: Annotated[str, typer.Option("--split", help="qrels/<split>.tsv")] = "test",
    mode: Annotated[
        EvalModeOption | None, typer.Option("--mode", help="default: search.mode setting")
    ] = None,
    rerank: Annotated[EvalRerankOption, typer.Option("--rerank")] = EvalRerankOption.none,
    top_k: Annotated[int, typer.Option("--top-k", min=1, max=1000, help="chunks retrieved per query")] = 100,
    limit_queries: Annotated[int | None, typer.Option("--limit-queries", min=1)] = None,
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            help="data directory of the evaluation index (and its embedding cache); default <data dir>/bench",
        ),
    ] = None,
    rrf_k: Annotated[int | None, typer.Option("--rrf-k", min=1)] = None,
    dense_weight: Annotated[float | None, typer.Option("--dense-weight", min=0.0)] = None,
    sparse_weight: Annotated[float | None, typer.Option("--sparse-weight", min=0.0)] = None,
    leg_depth: Annotated[
        int | None, typer.Option("--leg-depth", min=1, help="default: max(search.leg_depth, top-k)")
    ] = None,
    save_run: Annotated[
        Path | None, typer.Option("--save-run", help="write the ranked run (.json or .trec)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """nDCG@10, Recall@10/100, MRR@10, P@5 and p50/p95 latency of search on a BEIR split."""
    from agent.eval.retrieval import (
        RetrievalEvalConfig,
        eval_settings,
        load_beir,
        run_retrieval_eval,
    )
    from agent.eval.retrieval import (
        save_run as save,
    )

    config = RetrievalEvalConfig(
        beir_dir=beir, split=split, mode=mode.value if mode else None, rerank=rerank.value, top_k=top_k,
        limit_queries=limit_queries, rrf_k=rrf_k, dense_weight=dense_weight, sparse_weight=sparse_weight,
        leg_depth=leg_depth,
    )  # fmt: skip
    try:
        settings = eval_settings(load_beir(beir, split), home)
        report, run = run_retrieval_eval(config, settings, progress=not as_json and sys.stderr.isatty())
    except (ConfigError, FilterError) as exc:
        fail(str(exc), 2)
    except ProviderUnavailable as exc:
        fail(str(exc), 1)
    result = report.model_dump(mode="json")
    if save_run is not None:
        result["run_path"] = str(save(run, save_run))
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False))
        return
    typer.echo(f"{report.dataset} {report.split}: {report.queries} queries, {report.index_documents} documents "
               f"({report.index_points} points)")  # fmt: skip
    typer.echo(f"mode={report.mode} rerank={report.rerank} rrf_k={report.rrf_k} "
               f"weights={report.dense_weight:g}/{report.sparse_weight:g} leg_depth={report.leg_depth} "
               f"top_k={report.top_k}")  # fmt: skip
    typer.echo("  ".join(f"{name:>11}" for name in report.metrics))
    typer.echo("  ".join(f"{value:>11.4f}" for value in report.metrics.values()))
    for label, stats in (
        ("latency with embedding", report.latency_with_embedding),
        ("latency without embedding", report.latency_without_embedding),
        ("query embedding", report.latency_embedding),
        ("rerank", report.latency_rerank),
    ):
        if stats is not None:
            typer.echo(f"{label:>26}: p50 {stats.p50_ms:8.2f} ms   p95 {stats.p95_ms:8.2f} ms")
    if save_run is not None:
        typer.echo(f"run saved to {result['run_path']}")


class StatTestOption(StrEnum):
    student = "student"
    fisher = "fisher"


@eval_app.command("compare")
def eval_compare(
    runs: Annotated[
        list[Path], typer.Argument(help="run files saved with --save-run; the first is the baseline")
    ],
    beir: Annotated[Path, typer.Option("--beir", help="the BEIR dataset folder the runs were made on")],
    split: Annotated[str, typer.Option("--split")] = "test",
    stat_test: Annotated[
        StatTestOption, typer.Option("--test", help="paired t-test (student) or Fisher's randomisation")
    ] = StatTestOption.student,
    max_p: Annotated[float, typer.Option("--max-p", min=0.0, max=1.0)] = 0.05,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Paired significance tests between saved runs (ranx compare)."""
    from agent.eval.retrieval import compare_runs

    try:
        report = compare_runs(beir, split, {p.stem: p for p in runs}, stat_test=stat_test.value, max_p=max_p)
    except ConfigError as exc:
        fail(str(exc), 2)
    typer.echo(json.dumps(report.to_dict(), ensure_ascii=False) if as_json else str(report))


class QAFormatOption(StrEnum):
    hotpot = "hotpot"
    squad = "squad"
    rgb = "rgb"


@eval_app.command("qa")
def eval_qa(
    dataset: Annotated[
        Path, typer.Option("--dataset", help="the benchmark file (HotpotQA, SQuAD/CMRC or RGB)")
    ],
    qa_format: Annotated[QAFormatOption, typer.Option("--format", help="the file's layout")],
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="questions to run")] = None,
    sample_seed: Annotated[
        int | None,
        typer.Option(
            "--sample-seed", help="a seeded sample instead of the first N (SQuAD-format: always, seed 0)"
        ),
    ] = None,
    route: Annotated[
        RouteOption, typer.Option("--route", help="force a route, or let the router choose")
    ] = AUTO_ROUTE,
    negative_only: Annotated[
        bool, typer.Option("--negative-only", help="RGB: index only the negative passages (rejection rate)")
    ] = False,
    recall_k: Annotated[
        int, typer.Option("--recall-k", min=1, max=100, help="k of supporting recall@k")
    ] = 10,
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            help="data directory of the evaluation indexes (and embedding cache); default <data dir>/bench",
        ),
    ] = None,
    per_question: Annotated[
        bool, typer.Option("--per-question", help="include every question's answer and scores in --json")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Answer quality of the whole agent: EM, F1, answer-contained accuracy, supporting recall@k,
    refusal rate, supported sentences, routes, LLM calls and latency per route."""
    from agent.eval.qa import QAEvalConfig, run_qa_eval

    config = QAEvalConfig(
        dataset=dataset, format=qa_format.value, limit=limit, sample_seed=sample_seed, route=route.value,
        negative_only=negative_only, recall_k=recall_k,
    )  # fmt: skip
    try:
        report = run_qa_eval(config, home=home, progress=not as_json and sys.stderr.isatty())
    except ConfigError as exc:
        fail(str(exc), 2)
    except (ProviderUnavailable, ModelAssetError) as exc:
        fail(str(exc), 1)
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json", exclude=None if per_question else {"results"}),
                              ensure_ascii=False))  # fmt: skip
        return
    typer.echo(f"{report.dataset} ({report.format}{', negatives only' if report.negative_only else ''}): "
               f"{report.questions} questions, route {report.route_request}, {report.index_documents} documents "
               f"indexed, LLM {report.llm}")  # fmt: skip
    typer.echo("  ".join(f"{name}={value:.4f}" for name, value in report.metrics.items()))
    typer.echo(f"support: {report.support['supported_share']:.2%} of judged sentences fully supported "
               f"({int(report.support['sentences'])} sentences)")  # fmt: skip
    for name, stats in report.routes.items():
        typer.echo(f"  route {name:>9}: {stats.questions:4d} ({stats.share:.0%})  "
                   f"LLM calls/q {stats.llm_calls_per_question:.2f}  latency p50 {stats.latency.p50_ms / 1000:.1f} s "
                   f"p95 {stats.latency.p95_ms / 1000:.1f} s  contained {stats.contained:.2f}")  # fmt: skip
    for skipped in report.skipped_questions:
        typer.echo(f"skipped {skipped}", err=True)
    if report.errors:
        typer.echo(
            f"{report.errors} question(s) failed; see --json --per-question for their errors", err=True
        )


def _parse_list(text: str, convert: type, option: str) -> list:
    try:
        return [convert(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise typer.BadParameter(f"{option} takes a comma-separated list, got {text!r}") from None


@eval_app.command("fusion-sweep")
def eval_fusion_sweep(
    beir: Annotated[Path, typer.Option("--beir", help="a BEIR dataset folder")],
    split: Annotated[str, typer.Option("--split", help="tune on train, report on test")] = "train",
    rrf_ks: Annotated[str, typer.Option("--rrf-k", help="comma-separated k values")] = "5,10,20,30,60",
    weights: Annotated[
        str, typer.Option("--weights", help="comma-separated dense:sparse weight pairs")
    ] = "1:1,1:1.5,1.5:1,1:2,2:1",
    top_k: Annotated[int, typer.Option("--top-k", min=1, max=1000)] = 100,
    limit_queries: Annotated[int | None, typer.Option("--limit-queries", min=1)] = None,
    home: Annotated[
        Path | None,
        typer.Option("--home", help="data directory of the evaluation index; default <data dir>/bench"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Hybrid search metrics over a grid of RRF k and leg weights (each query embedded once)."""
    from agent.eval.retrieval import eval_settings, load_beir, sweep_fusion

    ks = _parse_list(rrf_ks, int, "--rrf-k")
    pairs = []
    for pair in _parse_list(weights, str, "--weights"):
        dense, _, sparse = pair.partition(":")
        try:
            pairs.append((float(dense), float(sparse)))
        except ValueError:
            raise typer.BadParameter(f"--weights: {pair!r} is not dense:sparse") from None
    try:
        settings = eval_settings(load_beir(beir, split), home)
        points = sweep_fusion(beir, split, settings, ks, pairs, top_k=top_k, limit_queries=limit_queries)
    except ConfigError as exc:
        fail(str(exc), 2)
    if as_json:
        typer.echo(json.dumps([p.model_dump() for p in points]))
        return
    typer.echo(
        f"{'k':>5} {'w_dense':>8} {'w_sparse':>8}  " + "  ".join(f"{m:>11}" for m in points[0].metrics)
    )
    for p in points:
        values = "  ".join(f"{v:>11.4f}" for v in p.metrics.values())
        typer.echo(f"{p.rrf_k:>5} {p.dense_weight:>8g} {p.sparse_weight:>8g}  {values}")
