"""The short answer is shown only when what is left of the checked answer states it."""

from __future__ import annotations

from graphs.rag.nodes._short_answer import (
    asks_yes_no,
    backed_short_answer,
    clean_short_answer,
    only_repeats_the_question,
    sentences_stating,
)
from tools.knowledge_base.sparse import tokenize

SENTENCE = "Every employee gets 25 days of paid annual leave per calendar year [1]."
PASSAGE = "Every employee gets 25 days of paid annual leave per calendar year. Up to 5 days carry over."


def backed(short: str, *evidence: str) -> str:
    return backed_short_answer(short, list(evidence), tokenize)


def test_a_short_answer_the_kept_sentence_states_is_kept_cleaned() -> None:
    assert backed('"25 days." [1]', SENTENCE, PASSAGE) == "25 days"


def test_a_number_that_nothing_kept_states_drops_the_short_answer() -> None:
    assert backed("30 days", SENTENCE, PASSAGE) == ""


def test_words_from_a_removed_sentence_drop_the_short_answer() -> None:
    assert backed("Marseille harbour", SENTENCE, PASSAGE) == ""


def test_the_same_words_in_another_form_still_count() -> None:
    assert backed("the annual leave day", SENTENCE) == "the annual leave day"


def test_a_chinese_short_answer_is_checked_by_its_characters() -> None:
    sentence = "HX-200 的额定载重为 200 公斤 [1]。"
    assert backed("200 公斤", sentence) == "200 公斤"
    assert backed("300 公斤", sentence) == ""
    assert backed("茅以升", sentence) == ""


def test_yes_or_no_stands_on_the_sentences_after_it() -> None:
    assert backed("Yes", "The Cestida are planktonic [1].") == "Yes"
    assert backed("是", "栉水母是浮游动物 [1]。") == "是"


def test_no_evidence_or_an_overlong_span_gives_no_short_answer() -> None:
    assert backed("25 days") == ""
    assert backed("25 days " * 30, SENTENCE) == ""
    assert backed("", SENTENCE) == ""


def test_cleaning_keeps_the_words_and_drops_markers_and_closing_punctuation() -> None:
    assert clean_short_answer("**Levi's Stadium**. [2][3]") == "Levi's Stadium"
    assert clean_short_answer("1031万人。") == "1031万人"


def test_only_the_sentences_that_state_the_short_answer_are_needed() -> None:
    padded = [SENTENCE, "Up to 5 unused days can be carried over [1].", "Requests need notice [1]."]
    assert sentences_stating("25 days", padded, tokenize) == [SENTENCE]


def test_an_answer_spread_over_sentences_or_a_yes_no_keeps_them_all() -> None:
    spread = ["Ann founded the firm [1].", "Bob joined her as co-founder [2]."]
    assert sentences_stating("Ann and Bob", spread, tokenize) == spread
    assert sentences_stating("yes", spread, tokenize) == spread
    assert sentences_stating("", spread, tokenize) == spread


def test_a_whole_sentence_copied_as_the_short_answer_is_not_one() -> None:
    sentence = "Ana Costa also wrote Late Interaction Notes, published in 2021 and read by the whole group"
    assert backed(sentence, sentence) == ""
    assert backed("Late Interaction Notes", sentence) == "Late Interaction Notes"


def test_a_short_answer_made_of_the_questions_own_words_is_not_an_answer() -> None:
    # "Who did Tesla think would run the world of the future?" -> the judge proposed "Tesla".
    question = "Who did Tesla think would run the world of the future?"
    assert only_repeats_the_question("Tesla", question, tokenize)
    assert not only_repeats_the_question("women", question, tokenize)
    assert not only_repeats_the_question(
        "Arthur's Magazine", "Which came first, Arthur's Magazine or Time?", tokenize
    )
    assert not only_repeats_the_question("yes", "Is Tesla older than Edison?", tokenize)
    assert only_repeats_the_question("李伟", "李伟还写过什么？", tokenize)


def test_only_a_question_asked_for_yes_or_no_takes_yes_or_no() -> None:
    # SQuAD: "What major conquest did Tancred play a roll in?" got the short answer "yes".
    for question in (
        "Is the warranty longer than a year?",
        "Were both bands formed in London?",
        "Did the museum open before 1900?",
        "And does it ship to Canada?",
        "HX-200 支持快充吗？",
        "这款相机是否防水",
        "他有没有获得过金牌？",
    ):
        assert asks_yes_no(question), question
    for question in (
        "What major conquest did Tancred play a roll in?",
        "Who wrote Fusion at Scale?",
        "Is the museum in Oslo or in Bergen?",
        "Which came first, Arthur's Magazine or Time?",
        "他还写过什么？",
        "首趟RCEP班列的起点？",
        "小米和华为哪家的销量更高？",
    ):
        assert not asks_yes_no(question), question
