"""The one lexicon the question and answer rules read numbers, years, ordinals and Chinese from."""

from __future__ import annotations

import pytest

from graphs.rag.lexicon import CJK, NUMBER, YEAR, numbers_in, zh_numeral_value


def test_numbers_are_read_in_digits_words_and_chinese_numerals() -> None:
    text = "1,186 fans saw six goals in 2016 [3]; 二十五天、一百五十欧元、二〇二一年、两千零二十一"
    assert numbers_in(text) == {"1186", "6", "2016", "25", "150", "2021"}  # not the citation's 3


@pytest.mark.parametrize(
    ("numeral", "value"),
    [("二十五", 25), ("一百五十", 150), ("二〇二一", 2021), ("十", 10), ("两千零二十一", 2021)],
)
def test_chinese_numerals_are_read_as_numbers(numeral: str, value: int) -> None:
    assert zh_numeral_value(numeral) == value


def test_a_number_stands_on_its_own_and_a_year_is_four_digits_between_1500_and_2099() -> None:
    assert NUMBER.findall("6.4% of 1,186, not No.5") == ["6.4", "1,186"]
    assert YEAR.findall("in 1999, 2021 and 12021 or 1499") == ["1999", "2021"]
    assert CJK.findall("Beijing 北京 㐀") == ["北", "京", "㐀"]  # CJK extension A counts too
