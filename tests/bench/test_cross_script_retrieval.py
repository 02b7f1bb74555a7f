"""``bench.cross_script_retrieval`` pairs each question script with each document script: a Traditional
copy of a BEIR folder, and folders that take one script's queries over the other's corpus with the
judgements of the documents (a railway's timetable stands in for CMRC)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import cross_script_retrieval
from tools.chinese_script import chinese_script


def write_beir(folder: Path) -> None:
    (folder / "qrels").mkdir(parents=True)
    corpus = {"_id": "d1", "title": "时刻表", "text": "高铁末班车晚上十点发车。"}
    (folder / "corpus.jsonl").write_text(json.dumps(corpus, ensure_ascii=False) + "\n", encoding="utf-8")
    query = {"_id": "q1", "text": "末班车几点发车？"}
    (folder / "queries.jsonl").write_text(json.dumps(query, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")


def read(path: Path) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def test_each_question_script_is_paired_with_each_document_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        cross_script_retrieval, "derive_beir_set", lambda name, data, out, queries: write_beir(out)
    )

    folders = cross_script_retrieval.script_folders("cmrc", tmp_path)
    traditional = folders["T"]
    assert chinese_script(read(traditional / "corpus.jsonl")["text"]) == "traditional"
    assert chinese_script(read(traditional / "queries.jsonl")["text"]) == "traditional"
    assert read(traditional / "corpus.jsonl")["_id"] == "d1"

    mixed = cross_script_retrieval.pairing_folder(folders, "T", "S")
    assert chinese_script(read(mixed / "queries.jsonl")["text"]) == "traditional"
    assert chinese_script(read(mixed / "corpus.jsonl")["text"]) == "simplified"
    assert (mixed / "qrels" / "test.tsv").read_text(encoding="utf-8").endswith("q1\td1\t1\n")
    assert cross_script_retrieval.pairing_folder(folders, "S", "S") == folders["S"]
