"""Traditional and Simplified Chinese in retrieval: does folding the scripts in the BM25 terms pay?

The two Chinese held-out retrieval sets (``agent/eval/beir_from_qa.py``: CMRC 2018 trial, RGB zh) are
written once more in Traditional Chinese with OpenCC's ``s2tw`` (queries and documents alike). Each
pairing of question script and document script — Simplified over Simplified (the shared sets as they
are; folding must not hurt there), Traditional over Traditional, and each script over the other — is
searched with ``search.fold_chinese_script`` off (the ``bm25-jieba-snowball-v1`` terms) and on, in the
sparse leg alone and in the default hybrid fusion (no rerank: the offline reranker tokenizes with
folding in both arms). Reported per cell: nDCG@10, Recall@5, Recall@10, MRR@10, and folded against
unfolded the per-query nDCG@10 wins / losses and a paired t-test. Folding was written from OpenCC's
character dictionary, not from these sets: nothing here is calibrated, so every query reports.

    .venv/bin/python -m bench.cross_script_retrieval      # saves bench/results/cross_script_retrieval.json; resumes
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.eval.beir_from_qa import derive_beir_set  # noqa: E402
from agent.eval.retrieval import (  # noqa: E402
    RetrievalEvalConfig,
    default_bench_home,
    eval_settings,
    load_beir,
    run_retrieval_eval,
)
from bench.retrieval_heldout import QUERIES_PER_SET, SHARED_DATA, evaluate, paired  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SETS = ("cmrc", "rgb")
#: (question script, document script); "S" as shared, "T" converted with s2tw
PAIRINGS = (("S", "S"), ("T", "T"), ("T", "S"), ("S", "T"))
MODES = ("sparse", "hybrid")


def _convert_jsonl(source: Path, target: Path, fields: tuple[str, ...]) -> None:
    from opencc_purepy import OpenCC

    s2tw = OpenCC("s2tw")
    with source.open(encoding="utf-8") as read, target.open("w", encoding="utf-8") as write:
        for line in read:
            if line.strip():
                record = json.loads(line)
                record.update({f: s2tw.convert(record[f]) for f in fields if record.get(f)})
                write.write(json.dumps(record, ensure_ascii=False) + "\n")


def script_folders(name: str, home: Path) -> dict[str, Path]:
    """The shared set (``S``) and its Traditional copy (``T``), each a BEIR folder (written once)."""
    base = home / "cross_script" / name
    simplified, traditional = base / "S", base / "T"
    if not (simplified / "qrels" / "test.tsv").exists():
        derive_beir_set(name, SHARED_DATA, simplified, queries=QUERIES_PER_SET[name])
    if not (traditional / "qrels" / "test.tsv").exists():
        (traditional / "qrels").mkdir(parents=True, exist_ok=True)
        _convert_jsonl(simplified / "corpus.jsonl", traditional / "corpus.jsonl", ("title", "text"))
        _convert_jsonl(simplified / "queries.jsonl", traditional / "queries.jsonl", ("text",))
        shutil.copy(simplified / "qrels" / "test.tsv", traditional / "qrels" / "test.tsv")
    return {"S": simplified, "T": traditional}


def pairing_folder(folders: dict[str, Path], questions: str, documents: str) -> Path:
    """A BEIR folder with ``documents``' corpus and ``questions``' queries (document ids are shared)."""
    if questions == documents:
        return folders[documents]
    target = folders[documents].parent / f"{questions}_over_{documents}"
    if not (target / "qrels" / "test.tsv").exists():
        (target / "qrels").mkdir(parents=True, exist_ok=True)
        shutil.copy(folders[documents] / "corpus.jsonl", target / "corpus.jsonl")
        shutil.copy(folders[questions] / "queries.jsonl", target / "queries.jsonl")
        shutil.copy(folders[documents] / "qrels" / "test.tsv", target / "qrels" / "test.tsv")
    return target


def run_cell(beir_dir: Path, home: Path, collection: str, fold: bool, mode: str) -> tuple[Any, Any]:
    beir = load_beir(beir_dir, "test")
    settings = eval_settings(beir, home, search={"fold_chinese_script": fold})
    settings = settings.model_copy(
        update={"qdrant": settings.qdrant.model_copy(update={"collection": collection})}
    )
    _, run = run_retrieval_eval(RetrievalEvalConfig(beir_dir=beir_dir, mode=mode), settings, progress=False)
    return beir, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument(
        "--home", type=Path, default=None, help="evaluation indexes (default <data dir>/bench)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "cross_script_retrieval.json")
    args = parser.parse_args(argv)

    home = args.home or default_bench_home()
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    cells = results.setdefault("cells", {})
    for name in args.sets:
        folders = script_folders(name, home)
        for questions, documents in PAIRINGS:
            beir_dir = pairing_folder(folders, questions, documents)
            for mode in MODES:
                key = f"{name}:{questions}_over_{documents}:{mode}"
                if key in cells:
                    continue  # resumable: a finished cell is kept
                per_query: dict[str, dict[str, float]] = {}
                entry: dict[str, Any] = {}
                started = time.perf_counter()
                for fold in (False, True):
                    # one index per document script and tokenizer, shared by both question scripts
                    collection = f"xs_{name}_{documents}_{'fold' if fold else 'v1'}"
                    beir, run = run_cell(beir_dir, home, collection, fold, mode)
                    query_ids = list(beir.queries)
                    metrics, per_query[str(fold)] = evaluate(beir, run, query_ids)
                    entry["folded" if fold else "unfolded"] = metrics
                    entry["queries"] = len(query_ids)
                entry["folded_against_unfolded"] = paired(per_query["False"], per_query["True"])
                entry["seconds"] = round(time.perf_counter() - started, 1)
                cells[key] = entry
                results["load_average_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
                print(f"{key}: unfolded {entry['unfolded']} folded {entry['folded']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
