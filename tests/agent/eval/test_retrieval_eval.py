"""Retrieval evaluation on a tiny BEIR dataset written in the test: real ingest, real index, ranx metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.eval.retrieval import (
    METRICS,
    RetrievalEvalConfig,
    compare_runs,
    eval_settings,
    load_beir,
    load_run,
    rank_documents,
    run_retrieval_eval,
    save_run,
    sweep_fusion,
)
from core.errors import ConfigError
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.knowledge_base.records import Hit
from tools.search import SearchRequest, hybrid_search

CORPUS = {
    "d1": (
        "Aspirin and heart attacks",
        "Daily low-dose aspirin reduces the risk of a first heart attack in adults.",
    ),
    "d2": (
        "Vitamin D and bones",
        "Vitamin D supplements improve bone density in elderly women with deficiency.",
    ),
    "d3": ("Coffee and sleep", "Caffeine taken six hours before bedtime shortens total sleep time."),
    "d4": (
        "Exercise and depression",
        "Aerobic exercise three times a week reduces symptoms of mild depression.",
    ),
    "d5": (
        "Salt and blood pressure",
        "Lower sodium intake lowers systolic blood pressure in hypertensive adults.",
    ),
    "d6": (
        "Antibiotics and viruses",
        "Antibiotics have no effect on the common cold, which is caused by viruses.",
    ),
    "d7": ("Smoking and lung cancer", "Tobacco smoking is the leading cause of lung cancer worldwide."),
    "d8": ("Statins and cholesterol", "Statins lower LDL cholesterol and reduce cardiovascular events."),
}
TEST_QUERIES = {
    "q1": ("Does aspirin prevent heart attacks?", {"d1": 1}),
    "q2": ("Does caffeine late in the day hurt sleep?", {"d3": 1}),
    "q3": ("Salt reduction lowers blood pressure", {"d5": 1}),
    "q4": ("Which drugs reduce cholesterol and cardiovascular risk?", {"d8": 1, "d1": 1}),
}
TRAIN_QUERIES = {"t1": ("Antibiotics do not cure colds", {"d6": 1})}


def write_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for doc_id, (title, text) in CORPUS.items():
            f.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as f:
        for qid, (text, _) in {**TEST_QUERIES, **TRAIN_QUERIES}.items():
            f.write(json.dumps({"_id": qid, "text": text}) + "\n")
    for split, queries in (("test", TEST_QUERIES), ("train", TRAIN_QUERIES)):
        lines = ["query-id\tcorpus-id\tscore"]
        lines += [
            f"{qid}\t{doc}\t{rel}" for qid, (_, judged) in queries.items() for doc, rel in judged.items()
        ]
        (folder / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def beir_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_beir(tmp_path_factory.mktemp("beir") / "tinyfact")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("eval") / "home"


@pytest.fixture(scope="module")
def first_run(beir_dir: Path, home: Path):
    settings = eval_settings(load_beir(beir_dir, "test"), home)
    return run_retrieval_eval(
        RetrievalEvalConfig(beir_dir=beir_dir, mode="hybrid", top_k=10), settings, progress=False
    )


def test_load_beir_reads_the_judged_queries_of_a_split(beir_dir):
    split = load_beir(beir_dir, "test")
    assert split.name == "tinyfact" and split.corpus_path.name == "corpus.jsonl"
    assert set(split.queries) == set(TEST_QUERIES) and split.qrels["q4"] == {"d8": 1, "d1": 1}


def test_load_beir_names_the_missing_or_malformed_file(beir_dir, tmp_path):
    with pytest.raises(ConfigError, match="qrels/dev.tsv"):
        load_beir(beir_dir, "dev")
    broken = write_beir(tmp_path / "broken")
    (broken / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"test.tsv:2"):
        load_beir(broken, "test")


def test_the_first_run_ingests_the_corpus_into_a_collection_of_its_own(first_run):
    report, _run = first_run
    assert report.ingest is not None and report.ingest["added"] == len(CORPUS)
    assert report.index_documents == len(CORPUS)
    assert report.dataset == "tinyfact" and report.split == "test" and report.queries == len(TEST_QUERIES)


def test_metrics_are_ranx_figures_of_the_document_ranking(first_run, beir_dir, home):
    report, run = first_run
    assert set(report.metrics) == set(METRICS)
    # Recompute MRR@10 and Recall@10 independently from hybrid_search itself (same knobs).
    settings = eval_settings(load_beir(beir_dir, "test"), home)
    reciprocal_ranks, recalls = [], []
    with KnowledgeBase.open(settings) as kb:
        for text, judged in TEST_QUERIES.values():
            hits = hybrid_search(
                SearchRequest(queries=[text], mode="hybrid", top_k=10, leg_depth=50), kb, ["public"]
            )
            docs = list(dict.fromkeys(h.doc_id for h in hits))[:10]
            first = next((i for i, d in enumerate(docs, start=1) if d in judged), None)
            reciprocal_ranks.append(1 / first if first else 0.0)
            recalls.append(len(set(docs) & set(judged)) / len(judged))
    assert report.metrics["mrr@10"] == pytest.approx(sum(reciprocal_ranks) / len(reciprocal_ranks), abs=1e-4)
    assert report.metrics["recall@10"] == pytest.approx(sum(recalls) / len(recalls), abs=1e-4)
    assert report.metrics["mrr@10"] > 0.5  # the queries are easy; a broken pipeline would not get here
    assert set(run.keys()) == set(TEST_QUERIES)


def test_latency_is_reported_with_and_without_the_query_embedding(first_run):
    report, _ = first_run
    with_embedding, without = report.latency_with_embedding, report.latency_without_embedding
    assert 0 < without.p50_ms <= with_embedding.p50_ms
    assert with_embedding.p50_ms <= with_embedding.p95_ms
    assert report.latency_embedding.p50_ms > 0 and report.latency_rerank is None


def test_a_second_run_reuses_the_index(first_run, beir_dir, home):
    settings = eval_settings(load_beir(beir_dir, "test"), home)
    report, _ = run_retrieval_eval(
        RetrievalEvalConfig(beir_dir=beir_dir, mode="hybrid", top_k=10), settings, progress=False
    )
    assert report.ingest is None
    assert report.metrics == first_run[0].metrics


def test_chunk_hits_are_aggregated_to_documents_by_their_best_position():
    hits = [Hit(chunk_id=f"c{i}", doc_id=doc, text="", score=s) for i, (doc, s) in
            enumerate([("a", 0.9), ("b", 0.8), ("a", 0.7), ("c", 0.95)])]  # fmt: skip
    assert rank_documents(hits) == {"a": 4.0, "b": 3.0, "c": 1.0}


def test_runs_can_be_saved_reloaded_and_compared_with_a_paired_test(beir_dir, home, tmp_path):
    settings = eval_settings(load_beir(beir_dir, "test"), home)
    paths = {}
    for mode in ("sparse", "hybrid"):
        # A hybrid run's name carries its knobs; the TREC file must still read back.
        config = RetrievalEvalConfig(beir_dir=beir_dir, mode=mode, top_k=10, rrf_k=5)
        _, run = run_retrieval_eval(config, settings, progress=False)
        paths[mode] = save_run(run, tmp_path / f"{mode}.trec")
    assert load_run(paths["hybrid"]).name == "hybrid"
    assert set(load_run(paths["sparse"]).keys()) == set(TEST_QUERIES)
    for stat_test in ("student", "fisher"):
        report = compare_runs(beir_dir, "test", paths, stat_test=stat_test)
        table = report.to_dict()
        assert set(table["model_names"]) == {"sparse", "hybrid"}
        p_value = table["sparse"]["comparisons"]["hybrid"]["ndcg@10"]
        assert p_value != p_value or 0.0 <= p_value <= 1.0  # NaN when the runs tie on every query
        assert table["stat_test"] == stat_test
    garbage = tmp_path / "garbage.trec"
    garbage.write_text("q1 Q0 d1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="garbage.trec"):
        load_run(garbage)


def test_cli_prints_one_json_object_and_respects_the_query_limit(beir_dir, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_path = tmp_path / "hybrid.json"
    result = CliRunner().invoke(
        app,
        ["eval", "retrieval", "--beir", str(beir_dir), "--split", "test", "--mode", "hybrid", "--top-k", "10",
         "--limit-queries", "2", "--home", str(home), "--json", "--save-run", str(run_path)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["queries"] == 2 and set(payload["metrics"]) == set(METRICS)
    assert payload["latency_without_embedding"]["p95_ms"] > 0
    assert run_path.is_file() and set(load_run(run_path).keys()) == {"q1", "q2"}


def test_cli_table_output_and_a_missing_dataset_exit_code(beir_dir, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table = CliRunner().invoke(
        app, ["eval", "retrieval", "--beir", str(beir_dir), "--home", str(home), "--top-k", "10"]
    )
    assert table.exit_code == 0, table.output
    assert "ndcg@10" in table.stdout and "p50" in table.stdout
    missing = CliRunner().invoke(
        app, ["eval", "retrieval", "--beir", str(tmp_path / "nope"), "--home", str(home)]
    )
    assert missing.exit_code == 2 and "no corpus.jsonl" in missing.stderr


def test_fusion_sweep_matches_single_runs_at_each_grid_point(beir_dir, home):
    settings = eval_settings(load_beir(beir_dir, "test"), home)
    points = sweep_fusion(beir_dir, "test", settings, [1, 60], [(1.0, 1.0), (1.0, 0.0)], top_k=10)
    assert len(points) == 4
    ndcgs = [p.metrics["ndcg@10"] for p in points]
    assert ndcgs == sorted(ndcgs, reverse=True)
    for point in points:
        config = RetrievalEvalConfig(beir_dir=beir_dir, mode="hybrid", top_k=10, rrf_k=point.rrf_k,
                                     dense_weight=point.dense_weight, sparse_weight=point.sparse_weight)  # fmt: skip
        report, _ = run_retrieval_eval(config, settings, progress=False)
        assert report.metrics == point.metrics


def test_cli_fusion_sweep_prints_the_grid(beir_dir, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["eval", "fusion-sweep", "--beir", str(beir_dir), "--split", "test", "--rrf-k", "10,60",
            "--weights", "1:1,2:1", "--top-k", "10", "--home", str(home), "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    grid = json.loads(result.stdout)
    assert {(p["rrf_k"], p["dense_weight"], p["sparse_weight"]) for p in grid} == {
        (10, 1.0, 1.0), (10, 2.0, 1.0), (60, 1.0, 1.0), (60, 2.0, 1.0)
    }  # fmt: skip
    bad = CliRunner().invoke(app, ["eval", "fusion-sweep", "--beir", str(beir_dir), "--weights", "1-1"])
    assert bad.exit_code == 2 and "dense:sparse" in bad.output


def test_evaluation_indexes_default_to_the_data_directory_not_the_working_directory(ragpilot_home):
    from agent.eval.retrieval import default_bench_home

    assert default_bench_home() == ragpilot_home / "bench"
