"""Readers of the QA benchmarks: each returns the selected questions and the passages to index for them.

Formats (``--format``):

- ``hotpot``: HotpotQA (distractor setting), a JSON list of questions. Both the Hugging Face layout
  (``context.title[]`` / ``context.sentences[][]``, ``supporting_facts.title[]``) and the original one
  (``context: [[title, [sentences]]]``, ``supporting_facts: [[title, sent_id]]``) are read. The passages
  are every paragraph of the selected questions, one document per title with its sentences joined.
- ``squad``: SQuAD v1.1 JSON (``.json`` or ``.json.gz``); CMRC 2018 uses the same layout. The passages
  are all paragraphs of the articles the selected questions come from (one document per paragraph).
- ``rgb``: RGB (one JSON object per line: ``query``, ``answer``, ``positive[]``, ``negative[]``). The
  passages are the positive and negative passages of the selected questions; with ``negative_only``
  only the negatives (RGB's negative-rejection setting: the answer is not in the knowledge base).

Selection: ``limit`` questions, either the first ones in file order or, with ``sample_seed``, a
seeded random sample (kept in file order). SQuAD-format files are always sampled (default seed 0):
their first questions all come from one article.

A selected question with no question text (CMRC 2018 trial has one: ``TRIAL_776_QUERY_4``) is not
run: it is listed in ``QADataset.skipped`` with its id, and the selection is otherwise unchanged.

Document ids are opaque (a hash of the title or text), so neither the model nor a reader of the
prompt can tell a positive passage from a negative one by its id.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.errors import ConfigError
from tools.knowledge_base.text_units import has_cjk

QAFormat = Literal["hotpot", "squad", "rgb", "mixed"]
DEFAULT_SQUAD_SEED = 0


class QAPassage(BaseModel):
    """One document of the evaluation knowledge base."""

    doc_id: str
    title: str
    text: str


class QAExample(BaseModel):
    """One question with its gold answer.

    ``answers`` is a list of groups: the answer is right when every group is matched by one of its
    aliases (RGB's convention; SQuAD and HotpotQA have one group of annotator answers)."""

    qid: str
    question: str
    answers: list[list[str]] = Field(min_length=1)
    language: Literal["en", "zh"]
    kind: str | None = None  # HotpotQA: bridge or comparison
    gold_titles: list[str] = Field(default_factory=list, description="HotpotQA supporting-fact titles")
    # The mixed set (agent/eval/mixed_set.py): whether the knowledge base states the answer, where the
    # question comes from, and the split it belongs to.
    answerable: bool = True
    source: str | None = None
    split: str | None = None


class QADataset(BaseModel):
    """The selected questions of one benchmark file and the passages to index for them."""

    name: str
    format: QAFormat
    path: Path
    examples: list[QAExample]
    passages: list[QAPassage]
    negative_only: bool = False
    skipped: list[str] = Field(
        default_factory=list, description="selected questions that cannot be asked, each with why"
    )


def load_qa_dataset(
    path: Path,
    qa_format: QAFormat,
    *,
    limit: int | None = None,
    sample_seed: int | None = None,
    negative_only: bool = False,
) -> QADataset:
    """Read ``path`` in ``qa_format`` and select ``limit`` questions (see the module docstring).

    Raises ConfigError naming the file (and the record) when it is missing or not in that format."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such dataset file")
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be at least 1, got {limit}")
    if negative_only and qa_format != "rgb":
        raise ConfigError("negative_only applies to --format rgb only (RGB ships the negative passages)")
    if qa_format == "hotpot":
        dataset = _read_hotpot(path, limit, sample_seed)
    elif qa_format == "squad":
        dataset = _read_squad(path, limit, DEFAULT_SQUAD_SEED if sample_seed is None else sample_seed)
    elif qa_format == "rgb":
        dataset = _read_rgb(path, limit, sample_seed, negative_only)
    elif qa_format == "mixed":
        dataset = _read_mixed(path, limit)
    else:
        raise ConfigError(f"unknown QA format {qa_format!r}: expected hotpot, squad or rgb")
    return _without_blank_questions(dataset)


def _without_blank_questions(dataset: QADataset) -> QADataset:
    """Drop selected questions that have no text (the agent rejects them), naming each in ``skipped``."""
    blank = [e for e in dataset.examples if not e.question.strip()]
    if not blank:
        return dataset
    return dataset.model_copy(
        update={
            "examples": [e for e in dataset.examples if e.question.strip()],
            "skipped": [f"{dataset.path.name}: question {e.qid!r} has no question text" for e in blank],
        }
    )


def select_indexes(total: int, limit: int | None, sample_seed: int | None) -> list[int]:
    """Indexes of the selected items: the first ``limit``, or a seeded sample of ``limit`` in file order."""
    if limit is None or limit >= total:
        return list(range(total))
    if sample_seed is None:
        return list(range(limit))
    return sorted(random.Random(sample_seed).sample(range(total), limit))


def language_of(*texts: str) -> Literal["en", "zh"]:
    return "zh" if any(has_cjk(t) for t in texts) else "en"


def opaque_id(prefix: str, text: str) -> str:
    return f"{prefix}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:16]}"


def _read_json(path: Path) -> Any:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as f:
                return json.load(f)
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not readable as JSON ({exc})") from None


# --- a built set (the mixed set), saved as a QADataset ------------------------------------------


def _read_mixed(path: Path, limit: int | None) -> QADataset:
    """A set saved by ``bench.mixed_set --build`` (``QADataset`` JSON); its first ``limit`` questions."""
    try:
        dataset = QADataset.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a saved QA dataset ({str(exc)[:300]})") from None
    examples = dataset.examples[:limit] if limit else dataset.examples
    return dataset.model_copy(update={"examples": examples, "path": path})


# --- HotpotQA -------------------------------------------------------------------------------------


def _hotpot_paragraphs(record: dict[str, Any]) -> list[tuple[str, list[str]]]:
    context = record["context"]
    if isinstance(context, dict):  # Hugging Face layout
        return list(zip(context["title"], context["sentences"], strict=True))
    return [(title, sentences) for title, sentences in context]  # original layout


def _hotpot_gold_titles(record: dict[str, Any]) -> list[str]:
    facts = record.get("supporting_facts") or []
    titles = facts["title"] if isinstance(facts, dict) else [title for title, _ in facts]
    return list(dict.fromkeys(titles))


def _read_hotpot(path: Path, limit: int | None, sample_seed: int | None) -> QADataset:
    records = _read_json(path)
    if not isinstance(records, list):
        raise ConfigError(f"{path}: a HotpotQA file is a JSON list of questions")
    examples: list[QAExample] = []
    passages: dict[str, QAPassage] = {}
    for index in select_indexes(len(records), limit, sample_seed):
        record = records[index]
        try:
            question, answer = str(record["question"]).strip(), str(record["answer"]).strip()
            paragraphs = _hotpot_paragraphs(record)
            gold_titles = _hotpot_gold_titles(record)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"{path}: question #{index} is not a HotpotQA record (question, answer, context, "
                f"supporting_facts): {exc!r}"
            ) from None
        for title, sentences in paragraphs:
            text = "".join(sentences).strip()
            if text and title not in passages:
                passages[title] = QAPassage(doc_id=opaque_id("hotpot", title), title=title, text=text)
        examples.append(
            QAExample(
                qid=str(record.get("id") or record.get("_id") or index),
                question=question,
                answers=[[answer]],
                language=language_of(question, answer),
                kind=record.get("type"),
                gold_titles=gold_titles,
            )
        )
    return QADataset(
        name=path.name.split(".")[0], format="hotpot", path=path, examples=examples,
        passages=list(passages.values()),
    )  # fmt: skip


# --- SQuAD / CMRC ---------------------------------------------------------------------------------


def _read_squad(path: Path, limit: int | None, sample_seed: int) -> QADataset:
    document = _read_json(path)
    articles = document.get("data") if isinstance(document, dict) else None
    if not isinstance(articles, list):
        raise ConfigError(f"{path}: a SQuAD-format file is an object with a 'data' list of articles")
    # Every question with where it comes from: (article index, paragraph index, qa record).
    located: list[tuple[int, int, dict[str, Any]]] = []
    try:
        for a, article in enumerate(articles):
            for p, paragraph in enumerate(article["paragraphs"]):
                for qa in paragraph["qas"]:
                    located.append((a, p, qa))
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: article #{len(located)} lacks paragraphs/qas ({exc!r})") from None
    examples: list[QAExample] = []
    chosen_articles: set[int] = set()
    for index in select_indexes(len(located), limit, sample_seed):
        a, p, qa = located[index]
        try:
            question = str(qa["question"]).strip()
            answers = list(dict.fromkeys(str(ans["text"]).strip() for ans in qa["answers"]))
        except (KeyError, TypeError) as exc:
            raise ConfigError(
                f"{path}: question {qa.get('id', index)!r} lacks question/answers ({exc!r})"
            ) from None
        answers = [text for text in answers if text]
        if not answers:
            raise ConfigError(f"{path}: question {qa.get('id', index)!r} has no answer text")
        context = str(articles[a]["paragraphs"][p].get("context", ""))
        examples.append(
            QAExample(
                qid=str(qa.get("id", index)),
                question=question,
                answers=[answers],
                language=language_of(question, answers[0], context[:200]),
            )
        )
        chosen_articles.add(a)
    passages = []
    for a in sorted(chosen_articles):
        title = str(articles[a].get("title") or f"article {a}")
        for p, paragraph in enumerate(articles[a]["paragraphs"]):
            text = str(paragraph.get("context", "")).strip()
            if text:
                passages.append(
                    QAPassage(doc_id=opaque_id("squad", f"{a}/{p}/{text}"), title=title, text=text)
                )
    return QADataset(
        name=path.name.split(".")[0], format="squad", path=path, examples=examples, passages=passages
    )


# --- RGB ------------------------------------------------------------------------------------------


def rgb_answer_groups(answer: Any) -> list[list[str]]:
    """RGB's answer field as groups: a string is one required answer, a list is one group of aliases."""
    items = answer if isinstance(answer, list) else [answer]
    groups: list[list[str]] = []
    for item in items:
        aliases = [str(a).strip() for a in item] if isinstance(item, list) else [str(item).strip()]
        aliases = [a for a in aliases if a]
        if aliases:
            groups.append(aliases)
    return groups


def _read_rgb(path: Path, limit: int | None, sample_seed: int | None, negative_only: bool) -> QADataset:
    records: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not readable ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}: not a JSON object ({exc})") from None
        if not isinstance(record, dict) or not {"query", "answer", "positive", "negative"} <= record.keys():
            raise ConfigError(f"{path}:{number}: an RGB record needs query, answer, positive and negative")
        record["_line"] = number
        records.append(record)
    examples: list[QAExample] = []
    passages: dict[str, QAPassage] = {}
    for index in select_indexes(len(records), limit, sample_seed):
        record = records[index]
        question = str(record["query"]).strip()
        groups = rgb_answer_groups(record["answer"])
        if not question or not groups:
            raise ConfigError(f"{path}:{record['_line']}: empty query or answer")
        kept = (
            list(record["negative"]) if negative_only else list(record["positive"]) + list(record["negative"])
        )
        for text in kept:
            text = str(text).strip()
            doc_id = opaque_id("rgb", text)
            if text and doc_id not in passages:
                passages[doc_id] = QAPassage(doc_id=doc_id, title=doc_id, text=text)
        examples.append(
            QAExample(
                qid=str(record.get("id", index)),
                question=question,
                answers=groups,
                language=language_of(question, groups[0][0]),
            )
        )
    return QADataset(
        name=path.name.split(".")[0], format="rgb", path=path, examples=examples,
        passages=list(passages.values()), negative_only=negative_only,
    )  # fmt: skip
