"""Sentence boundaries and language detection (English and Chinese)."""

from __future__ import annotations

from tools.knowledge_base.text_units import detect_language, sentence_spans, split_paragraphs, split_sentences


def test_english_sentences_split_at_terminal_punctuation() -> None:
    assert split_sentences("The arm is ready. Is it safe? Yes!") == [
        "The arm is ready.",
        "Is it safe?",
        "Yes!",
    ]


def test_abbreviations_do_not_end_sentences() -> None:
    text = "Dr. Silva approved it, e.g. for the HX-200 line. The lab opens at 9 a.m. on Monday."
    assert split_sentences(text) == [
        "Dr. Silva approved it, e.g. for the HX-200 line.",
        "The lab opens at 9 a.m. on Monday.",
    ]


def test_decimals_versions_and_urls_do_not_end_sentences() -> None:
    text = "Speed rose from 2.0 to 2.4 m/s in firmware v4.2 (see https://example.com/notes.html for details). Done."
    assert split_sentences(text) == [
        "Speed rose from 2.0 to 2.4 m/s in firmware v4.2 (see https://example.com/notes.html for details).",
        "Done.",
    ]


def test_lowercase_after_period_is_not_a_new_sentence() -> None:
    assert split_sentences("It weighs approx. 24 kg. and fits one cell.") == [
        "It weighs approx. 24 kg. and fits one cell."
    ]


def test_chinese_sentences_split_without_spaces() -> None:
    text = "员工每年享有25天年假。病假呢？需要医生证明；否则不予批准！版本2.0已发布。"
    assert split_sentences(text) == [
        "员工每年享有25天年假。",
        "病假呢？",
        "需要医生证明；",
        "否则不予批准！",
        "版本2.0已发布。",
    ]


def test_closing_quotes_stay_with_their_sentence() -> None:
    assert split_sentences("他说：“可以。”然后离开了。") == ["他说：“可以。”", "然后离开了。"]


def test_blank_lines_and_list_items_end_units_but_wrapped_lines_do_not() -> None:
    text = "First paragraph without a period\n\nA wrapped line that\ncontinues here.\n- item one\n- item two"
    assert split_sentences(text) == [
        "First paragraph without a period",
        "A wrapped line that\ncontinues here.",
        "- item one",
        "- item two",
    ]


def test_spans_point_into_the_original_text() -> None:
    text = "  One.  Two?\n\n三。"
    assert [text[s:e] for s, e in sentence_spans(text)] == ["One.", "Two?", "三。"]


def test_paragraphs_split_on_blank_lines() -> None:
    assert split_paragraphs("a\nb\n\n \nc\n") == ["a\nb", "c"]


def test_detect_language() -> None:
    assert detect_language("Employees get 25 days of annual leave.") == "en"
    assert detect_language("员工每年享有二十五天带薪年假。") == "zh"
    # Chinese technical text full of Latin product names is still Chinese.
    assert detect_language("HX-200 仓储搬运机器人的额定载重为 200 公斤，导航方式为激光 SLAM。") == "zh"
    assert detect_language("従業員は年に25日の休暇を取得できます。") == "other"
    assert detect_language("12345 67.8") == "other"
