"""One lexicon for what the question and answer rules read: numbers (digits, English words, Chinese
numerals), years, ordinals, months and seasons, Chinese characters, citation markers. Every rule in ``graphs/`` that looks for one of
them imports it from here, so a fix to how a number is read reaches every rule at once.

Every comparison of an answer with its passages reads both in ``one_script``: an answer written in the
user's Traditional Chinese states what a Simplified passage states (and the reverse).
"""

from __future__ import annotations

import re

from tools.chinese_script import fold_to_simplified

# A number standing on its own ("6.4", "1,186"; not the "5" of "No.5" or of "3.5").
NUMBER = re.compile(r"(?<![\d.])\d+(?:[.,]\d+)*")
YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
# An edition or a rank the question names: 第七届, 第三艘, 第31任, 第一季度 (constraints, not list items).
# Not 第N次: in the questions read so far it counts occurrences ("第一次获得冠军", "第一次播出"), which
# passages state as 首次 or as a list of years, so demanding it near the answer refuses right answers.
ORDINAL_ZH = re.compile(r"第[一二三四五六七八九十百零两\d]+[届艘个任期轮批号季]")
ENGLISH_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "former": 1}
# [1], [1][2], [1, 2], [1，2], 【1】 — the forms models actually write.
CITATION_MARKER = re.compile(r"[\[【]\s*(\d{1,3}(?:\s*[,，、;]\s*\d{1,3})*)\s*[\]】]")
# What joins the items of a list: "A, B and C", "甲、乙和丙".
LIST_SEPARATORS = re.compile(r"\s*(?:、|，|,|和|与|及|以及|\band\b)\s*")
CJK = re.compile(r"[\u3400-\u9fff]")
CJK_RUN = re.compile(r"[\u3400-\u9fff]+")


def plain_number(number: str) -> str:
    return number.replace(",", "")


# Numbers a passage may spell out where the answer writes digits ("six" -> "6", "十二" -> "12").
_SPELLED = {
    word: str(value)
    for value, words in enumerate(
        [
            "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
            "nineteen", "twenty",
        ]
    )
    for word in [words]
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
     "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000", "dozen": "12"}  # fmt: skip
_ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千]+")
_WORD = re.compile(r"[a-z]+")


def zh_numeral_value(numeral: str) -> int:
    """A Chinese numeral below 10,000 as a number: 二十五 -> 25, 一百五十 -> 150, 二〇二一 -> 2021."""
    if not any(c in _ZH_UNITS for c in numeral):  # digit by digit, as years are written
        return int("".join(str(_ZH_DIGITS[c]) for c in numeral))
    value = current = 0
    for char in numeral:
        if char in _ZH_UNITS:
            value += (current or 1) * _ZH_UNITS[char]
            current = 0
        else:
            current = _ZH_DIGITS[char]
    return value + current


def one_script(text: str) -> str:
    """``text`` with Traditional Chinese folded onto Simplified (發 → 发, 兩 → 两), for comparing, not showing."""
    return fold_to_simplified(text)


def numbers_in(text: str) -> set[str]:
    """The numbers of ``text``: in digits (thousands separators dropped), and spelled out in English
    words or Chinese numerals (either script); citation markers excluded."""
    text = one_script(CITATION_MARKER.sub(" ", text))
    found = {plain_number(n) for n in NUMBER.findall(text)}
    found |= {_SPELLED[w] for w in _WORD.findall(text.lower()) if w in _SPELLED}
    found |= {str(zh_numeral_value(n)) for n in _ZH_NUMERAL.findall(text)}
    return found


# Words that put a year after them ("June 2015", "Spring 2019"); any other capitalised word before a
# four-digit number makes it a label ("Suite 2001", "Flight 1549", "Windows 2000"), not a year.
MONTHS_AND_SEASONS = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
    "dec", "spring", "summer", "autumn", "fall", "winter",
})  # fmt: skip
