"""``bench.traditional_chinese`` writes its Traditional copy of a SQuAD-format file with every gold
answer still a span of its passage (a bakery article stands in for CMRC)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import traditional_chinese
from tools.chinese_script import chinese_script

ARTICLE = {"version": "v1.0", "data": [{"title": "面包店", "paragraphs": [{
    "context": "这家面包店每天早上七点开门，周末还卖现烤的蛋挞。",
    "qas": [{"id": "Q1", "question": "面包店几点开门？", "answers": [{"text": "早上七点", "answer_start": 7}]}],
}]}]}  # fmt: skip


@pytest.fixture(autouse=True)
def bakery_trial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench reads the bakery article where it reads the CMRC trial file."""
    source = tmp_path / "trial.json"
    source.write_text(json.dumps(ARTICLE, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(traditional_chinese, "SOURCE", source)


def test_the_copy_is_traditional_and_keeps_every_answer_a_span_of_its_passage(tmp_path: Path) -> None:
    copy = json.loads(traditional_chinese.traditional_copy(tmp_path / "home").read_text(encoding="utf-8"))

    paragraph = copy["data"][0]["paragraphs"][0]
    qa = paragraph["qas"][0]
    assert chinese_script(paragraph["context"]) == chinese_script(qa["question"]) == "traditional"
    answer = qa["answers"][0]
    assert paragraph["context"][answer["answer_start"] :].startswith(answer["text"])


def test_over_simplified_documents_only_the_questions_are_traditional(tmp_path: Path) -> None:
    copy = json.loads(
        traditional_chinese.traditional_questions_copy(tmp_path / "home").read_text(encoding="utf-8")
    )

    paragraph = copy["data"][0]["paragraphs"][0]
    assert paragraph["context"] == ARTICLE["data"][0]["paragraphs"][0]["context"]
    assert chinese_script(paragraph["qas"][0]["question"]) == "traditional"
    assert paragraph["qas"][0]["answers"] == ARTICLE["data"][0]["paragraphs"][0]["qas"][0]["answers"]
