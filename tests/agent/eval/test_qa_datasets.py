"""The QA dataset readers on tiny inline samples of each layout, and their errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from agent.eval.datasets import load_qa_dataset, rgb_answer_groups, select_indexes
from core.errors import ConfigError

HOTPOT_HF = [
    {
        "id": "h1",
        "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
        "answer": "yes",
        "type": "comparison",
        "supporting_facts": {"title": ["Scott Derrickson", "Ed Wood"], "sent_id": [0, 0]},
        "context": {
            "title": ["Ed Wood", "Scott Derrickson", "Tyler Bates"],
            "sentences": [
                ["Ed Wood was an American filmmaker.", " He made cult films."],
                ["Scott Derrickson is an American director."],
                ["Tyler Bates is a composer."],
            ],
        },
    },
    {
        "question": "Who composed the score of Sinister?",
        "answer": "Christopher Young",
        "type": "bridge",
        "supporting_facts": {"title": ["Sinister"], "sent_id": [0]},
        "context": {
            "title": ["Sinister", "Ed Wood"],
            "sentences": [
                ["Sinister was scored by Christopher Young."],
                ["Ed Wood was an American filmmaker."],
            ],
        },
    },
]


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_hotpot_reads_one_document_per_title_with_sentences_joined(tmp_path: Path):
    path = _write(tmp_path, "hotpot.json", json.dumps(HOTPOT_HF))
    dataset = load_qa_dataset(path, "hotpot")
    assert [e.question for e in dataset.examples] == [r["question"] for r in HOTPOT_HF]
    by_title = {p.title: p.text for p in dataset.passages}
    assert set(by_title) == {"Ed Wood", "Scott Derrickson", "Tyler Bates", "Sinister"}  # shared title once
    assert by_title["Ed Wood"] == "Ed Wood was an American filmmaker. He made cult films."
    first = dataset.examples[0]
    assert first.answers == [["yes"]] and first.kind == "comparison" and first.language == "en"
    assert first.gold_titles == ["Scott Derrickson", "Ed Wood"]


def test_hotpot_original_layout_gives_the_same_questions(tmp_path: Path):
    original = [
        {
            "_id": "o1",
            "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
            "answer": "yes",
            "type": "comparison",
            "supporting_facts": [["Scott Derrickson", 0], ["Ed Wood", 0]],
            "context": [["Ed Wood", ["Ed Wood was an American filmmaker."]],
                        ["Scott Derrickson", ["Scott Derrickson is an American director."]]],
        }
    ]  # fmt: skip
    dataset = load_qa_dataset(_write(tmp_path, "orig.json", json.dumps(original)), "hotpot")
    assert dataset.examples[0].qid == "o1"
    assert dataset.examples[0].gold_titles == ["Scott Derrickson", "Ed Wood"]
    assert {p.title for p in dataset.passages} == {"Ed Wood", "Scott Derrickson"}


def test_hotpot_limit_takes_the_first_questions_and_only_their_paragraphs(tmp_path: Path):
    dataset = load_qa_dataset(_write(tmp_path, "hotpot.json", json.dumps(HOTPOT_HF)), "hotpot", limit=1)
    assert len(dataset.examples) == 1
    assert "Sinister" not in {p.title for p in dataset.passages}


def test_document_ids_do_not_reveal_gold_or_negative_passages(tmp_path: Path):
    dataset = load_qa_dataset(_write(tmp_path, "hotpot.json", json.dumps(HOTPOT_HF)), "hotpot")
    for passage in dataset.passages:
        assert passage.doc_id.startswith("hotpot-") and passage.title not in passage.doc_id


SQUAD = {
    "version": "1.1",
    "data": [
        {"title": "Alpha", "paragraphs": [
            {"context": "Alpha was founded in 1900.", "qas": [
                {"id": "a1", "question": "When was Alpha founded?", "answers": [{"text": "1900", "answer_start": 22},
                                                                                 {"text": "1900", "answer_start": 22},
                                                                                 {"text": "in 1900", "answer_start": 19}]}]},
            {"context": "Alpha has two campuses.", "qas": [
                {"id": "a2", "question": "How many campuses?", "answers": [{"text": "two", "answer_start": 10}]}]},
        ]},
        {"title": "Beta", "paragraphs": [
            {"context": "Beta is red.", "qas": [
                {"id": "b1", "question": "What colour is Beta?", "answers": [{"text": "red", "answer_start": 8}]}]},
        ]},
    ],
}  # fmt: skip


def test_squad_indexes_every_paragraph_of_the_selected_questions_articles(tmp_path: Path):
    path = _write(tmp_path, "dev.json.gz", gzip.compress(json.dumps(SQUAD).encode()))
    dataset = load_qa_dataset(path, "squad", limit=1, sample_seed=3)
    (example,) = dataset.examples
    article = "Alpha" if example.qid.startswith("a") else "Beta"
    assert {p.title for p in dataset.passages} == {article}
    assert len(dataset.passages) == (2 if article == "Alpha" else 1)


def test_squad_answers_are_one_group_of_distinct_annotations(tmp_path: Path):
    dataset = load_qa_dataset(_write(tmp_path, "dev.json", json.dumps(SQUAD)), "squad")
    first = next(e for e in dataset.examples if e.qid == "a1")
    assert first.answers == [["1900", "in 1900"]]


def test_squad_sample_is_fixed_by_its_seed(tmp_path: Path):
    path = _write(tmp_path, "dev.json", json.dumps(SQUAD))
    picks = {load_qa_dataset(path, "squad", limit=2).examples[i].qid for i in range(2)}
    again = {load_qa_dataset(path, "squad", limit=2).examples[i].qid for i in range(2)}
    assert picks == again


def test_a_question_without_text_is_skipped_by_name_and_the_rest_are_kept(tmp_path: Path):
    # CMRC 2018 trial ships one such question (TRIAL_776_QUERY_4); the agent rejects a blank question.
    blank = json.loads(json.dumps(SQUAD))
    blank["data"][0]["paragraphs"][0]["qas"][0]["question"] = "  "
    dataset = load_qa_dataset(_write(tmp_path, "dev.json", json.dumps(blank)), "squad")
    assert "a1" not in {e.qid for e in dataset.examples}
    assert len(dataset.examples) == sum(len(p["qas"]) for a in SQUAD["data"] for p in a["paragraphs"]) - 1
    assert dataset.skipped == ["dev.json: question 'a1' has no question text"]


def test_chinese_squad_format_is_detected_as_chinese(tmp_path: Path):
    cmrc = {"version": "v1.0", "data": [{"id": "T1", "title": "泡泡战士", "paragraphs": [
        {"id": "T1", "context": "生命数耗完即算为踢爆。", "qas": [
            {"id": "T1_Q0", "question": "生命数耗完即算为什么？", "answers": [{"text": "踢爆", "answer_start": 8}]}]}]}]}  # fmt: skip
    dataset = load_qa_dataset(_write(tmp_path, "cmrc.json", json.dumps(cmrc, ensure_ascii=False)), "squad")
    assert dataset.examples[0].language == "zh"


RGB_LINES = [
    {"id": 0, "query": "寺庙踩踏事故死亡人数", "answer": ["12人"], "positive": ["事故造成12人死亡。"],
     "negative": ["另一起事故造成3人死亡。", "事故造成12人死亡。"]},
    {"id": 1, "query": "冠军是谁", "answer": [["张丹", "丹"], "张昊"], "positive": ["张丹和张昊夺冠。"],
     "negative": ["比赛在北京举行。"]},
]  # fmt: skip


def _rgb(tmp_path: Path) -> Path:
    return _write(tmp_path, "zh.json", "\n".join(json.dumps(r, ensure_ascii=False) for r in RGB_LINES) + "\n")


def test_rgb_indexes_positive_and_negative_passages_once_each(tmp_path: Path):
    dataset = load_qa_dataset(_rgb(tmp_path), "rgb")
    texts = sorted(p.text for p in dataset.passages)
    assert texts == sorted(
        {"事故造成12人死亡。", "另一起事故造成3人死亡。", "张丹和张昊夺冠。", "比赛在北京举行。"}
    )
    assert dataset.examples[1].answers == [["张丹", "丹"], ["张昊"]]


def test_rgb_negative_only_leaves_the_positives_out(tmp_path: Path):
    dataset = load_qa_dataset(_rgb(tmp_path), "rgb", negative_only=True)
    texts = {p.text for p in dataset.passages}
    assert "张丹和张昊夺冠。" not in texts and "比赛在北京举行。" in texts
    assert dataset.negative_only


def test_rgb_answer_groups():
    assert rgb_answer_groups(["12人"]) == [["12人"]]
    assert rgb_answer_groups([["1313851", "131万"]]) == [["1313851", "131万"]]
    assert rgb_answer_groups("x") == [["x"]]


def test_seeded_selection_keeps_file_order():
    picked = select_indexes(100, 5, 7)
    assert picked == sorted(picked) and len(set(picked)) == 5
    assert select_indexes(100, 3, None) == [0, 1, 2]


def test_missing_file_names_the_path(tmp_path: Path):
    with pytest.raises(ConfigError, match="nope.json"):
        load_qa_dataset(tmp_path / "nope.json", "hotpot")


def test_a_bad_hotpot_record_names_its_position(tmp_path: Path):
    path = _write(tmp_path, "bad.json", json.dumps([HOTPOT_HF[0], {"question": "q"}]))
    with pytest.raises(ConfigError, match=r"bad.json: question #1"):
        load_qa_dataset(path, "hotpot")


def test_a_bad_rgb_line_names_its_line(tmp_path: Path):
    path = _write(tmp_path, "rgb.json", json.dumps(RGB_LINES[0], ensure_ascii=False) + "\n{not json\n")
    with pytest.raises(ConfigError, match=r"rgb.json:2"):
        load_qa_dataset(path, "rgb")


def test_negative_only_is_refused_outside_rgb(tmp_path: Path):
    path = _write(tmp_path, "dev.json", json.dumps(SQUAD))
    with pytest.raises(ConfigError, match="negative_only"):
        load_qa_dataset(path, "squad", negative_only=True)


def test_a_squad_file_given_as_hotpot_is_rejected(tmp_path: Path):
    with pytest.raises(ConfigError, match="JSON list"):
        load_qa_dataset(_write(tmp_path, "dev.json", json.dumps(SQUAD)), "hotpot")
