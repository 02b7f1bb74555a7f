"""Retrieval test sets derived from QA benchmarks: question -> its gold paragraph(s), among all the others.

A reranker, fusion weights or a threshold fitted on one corpus (SciFact) must be measured on corpora it
was not fitted on before it becomes a default (issue 22). These are such corpora, written as BEIR
folders (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``) so ``run_retrieval_eval`` reads them:

- ``squad``: SQuAD v1.1 dev, every paragraph of every article (2,067); a seeded sample of questions, each
  judged against the paragraph it was written from (English, Wikipedia);
- ``hotpotqa``: the shared HotpotQA first 100, all their paragraphs (10 per question, de-duplicated by
  title); each question judged against its two supporting paragraphs (English, multi-hop);
- ``cmrc``: CMRC 2018 trial, every paragraph; each question judged against its paragraph (Chinese);
- ``rgb``: RGB zh_refine, every positive and negative passage of every question (news, Chinese); each
  question judged against its own positives. Noise passages of one question are other questions'
  distractors too, which makes this the hardest of the four.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from core.errors import ConfigError

HELDOUT_SETS = ("squad", "hotpotqa", "cmrc", "rgb")


class DerivedSet(BaseModel):
    name: str
    documents: int
    queries: int
    judgements: int


def _doc_id(prefix: str, text: str) -> str:
    return f"{prefix}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def _squad_like(
    path: Path, prefix: str
) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, set[str]]]]:
    """Documents ``id -> (title, text)`` and questions ``(qid, text, {gold doc ids})`` of a SQuAD-format file."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)["data"]
    documents: dict[str, tuple[str, str]] = {}
    questions: list[tuple[str, str, set[str]]] = []
    for article in data:
        title = str(article.get("title", ""))
        for paragraph in article["paragraphs"]:
            context = str(paragraph["context"])
            doc_id = _doc_id(prefix, context)
            documents[doc_id] = (title, context)
            for qa in paragraph["qas"]:
                if str(qa["question"]).strip():
                    questions.append((f"{prefix}-q{qa['id']}", str(qa["question"]).strip(), {doc_id}))
    return documents, questions


def _hotpot(path: Path) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, set[str]]]]:
    records = json.loads(path.read_text(encoding="utf-8"))
    documents: dict[str, tuple[str, str]] = {}
    questions: list[tuple[str, str, set[str]]] = []
    for number, record in enumerate(records):
        ids_by_title: dict[str, str] = {}
        context = record["context"]
        for title, sentences in zip(context["title"], context["sentences"], strict=True):
            doc_id = _doc_id("hotpot", title)
            documents[doc_id] = (title, "".join(sentences))
            ids_by_title[title] = doc_id
        gold = {ids_by_title[t] for t in record["supporting_facts"]["title"] if t in ids_by_title}
        questions.append((f"hotpot-{record.get('id', number)}", str(record["question"]).strip(), gold))
    return documents, questions


def _rgb(path: Path) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, set[str]]]]:
    documents: dict[str, tuple[str, str]] = {}
    questions: list[tuple[str, str, set[str]]] = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        record = json.loads(line)
        gold: set[str] = set()
        for kind in ("positive", "negative"):
            for text in record.get(kind) or []:
                doc_id = _doc_id("rgb", str(text))
                documents[doc_id] = ("", str(text))
                if kind == "positive":
                    gold.add(doc_id)
        if gold:
            questions.append((f"rgb-{record.get('id', line_no)}", str(record["query"]).strip(), gold))
    return documents, questions


def _write(
    out_dir: Path,
    documents: dict[str, tuple[str, str]],
    questions: Iterable[tuple[str, str, set[str]]],
) -> DerivedSet:
    (out_dir / "qrels").mkdir(parents=True, exist_ok=True)
    with (out_dir / "corpus.jsonl").open("w", encoding="utf-8") as corpus:
        for doc_id, (title, text) in documents.items():
            corpus.write(json.dumps({"_id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
    queries = list(questions)
    judgements = 0
    with (
        (out_dir / "queries.jsonl").open("w", encoding="utf-8") as q,
        (out_dir / "qrels" / "test.tsv").open("w", encoding="utf-8") as qrels,
    ):
        qrels.write("query-id\tcorpus-id\tscore\n")
        for qid, text, gold in queries:
            q.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
            for doc_id in sorted(gold):
                qrels.write(f"{qid}\t{doc_id}\t1\n")
                judgements += 1
    return DerivedSet(
        name=out_dir.name, documents=len(documents), queries=len(queries), judgements=judgements
    )


def derive_beir_set(
    name: str, shared_data: Path, out_dir: Path, *, queries: int, seed: int = 0
) -> DerivedSet:
    """Write the BEIR folder ``out_dir`` for held-out set ``name`` (one of ``HELDOUT_SETS``) from the shared
    data folder, with a seeded sample of at most ``queries`` questions (all documents are kept)."""
    if name == "squad":
        documents, questions = _squad_like(shared_data / "squad" / "dev-v1.1.json.gz", "squad")
    elif name == "cmrc":
        documents, questions = _squad_like(shared_data / "cmrc2018" / "cmrc2018_trial.json", "cmrc")
    elif name == "hotpotqa":
        documents, questions = _hotpot(shared_data / "hotpotqa" / "hotpot_dev_distractor_first100.json")
    elif name == "rgb":
        documents, questions = _rgb(shared_data / "rgb" / "zh_refine.json")
    else:
        raise ConfigError(
            f"unknown held-out retrieval set {name!r}: expected one of {', '.join(HELDOUT_SETS)}"
        )
    if len(questions) > queries:
        questions = sorted(random.Random(seed).sample(questions, queries))
    return _write(out_dir, documents, questions)
