"""``ragpilot eval ...``: measurement commands, one function per benchmark kind (``retrieval``, ...)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from agent.cli.app import app
from agent.errors import ConfigError, FilterError, ProviderUnavailable
from tools.eval.retrieval import DEFAULT_BENCH_HOME

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
        Path, typer.Option("--home", help="data directory of the evaluation index (and its embedding cache)")
    ] = DEFAULT_BENCH_HOME,
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
    from tools.eval.retrieval import (
        RetrievalEvalConfig,
        eval_settings,
        load_beir,
        run_retrieval_eval,
    )
    from tools.eval.retrieval import (
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
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except ProviderUnavailable as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
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
    from tools.eval.retrieval import compare_runs

    try:
        report = compare_runs(beir, split, {p.stem: p for p in runs}, stat_test=stat_test.value, max_p=max_p)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(json.dumps(report.to_dict(), ensure_ascii=False) if as_json else str(report))
