"""Sentence boundaries and language detection for English and Chinese text.

Chunkers never cut inside a sentence when a boundary exists, so the boundaries found here decide
chunk quality. English splits at ``.!?;`` followed by whitespace (not after abbreviations such as
"e.g." or "Dr.", and not inside decimals or URLs, which have no space after the dot); Chinese splits
at ``。！？；`` with no whitespace needed. Blank lines always end a sentence, and so do line breaks
before list items, table rows and headings.
"""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["zh", "en", "other"]

_CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df"
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_LATIN_RE = re.compile(r"[A-Za-z]")
_KANA_HANGUL_RE = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")

_CLOSERS = "”’」』）)\\]\"'"
# Candidate boundaries: a run of terminators plus closing quotes/brackets, or a line break.
_CANDIDATE_RE = re.compile(
    f"[。！？；]+[{_CLOSERS}]*|[!?;]+[{_CLOSERS}]*|\\.+[{_CLOSERS}]*|…+[{_CLOSERS}]*|\\n"
)
_PARAGRAPH_RE = re.compile(r"\n[ \t]*\n\s*")
# A line that starts a list item, a table row, a heading or a quote is its own unit.
_BLOCK_START_RE = re.compile(r"[ \t]*(?:[-*+•·]\s|\d{1,3}[.)、]\s?|[（(]?\d{1,3}[）)]|#{1,6}\s|\||>)")
_LINE_END_TERMINATORS = tuple(".!?;:。！？；：")

# Words whose trailing dot is not a sentence end (compared lower-case, without the final dot).
_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "cf",
        "vs",
        "al",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "no",
        "nos",
        "fig",
        "figs",
        "eq",
        "eqs",
        "approx",
        "ca",
        "resp",
        "ref",
        "refs",
        "sec",
        "ch",
        "vol",
        "pp",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "est",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "a.m",
        "p.m",
        "ph.d",
        "min",
        "max",
        "avg",
        "incl",
        "excl",
    ]
)


def cjk_count(text: str) -> int:
    return len(_CJK_RE.findall(text))


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def is_cjk_char(char: str) -> bool:
    return bool(char) and _CJK_RE.match(char) is not None


def detect_language(text: str, sample_chars: int = 4000) -> Language:
    """Guess the main language from the share of CJK ideographs among letters.

    Chinese technical text is full of Latin product names, so a CJK share of 20% already means "zh".
    Japanese and Korean (kana / hangul present) come out as "other".
    """
    sample = text[:sample_chars]
    cjk = cjk_count(sample)
    latin = len(_LATIN_RE.findall(sample))
    kana_hangul = len(_KANA_HANGUL_RE.findall(sample))
    other_letters = sum(1 for c in sample if c.isalpha()) - cjk - latin - kana_hangul
    total = cjk + latin + kana_hangul + max(other_letters, 0)
    if total == 0:
        return "other"
    if kana_hangul > 0.05 * total:
        return "other"
    if cjk / total >= 0.2:
        return "zh"
    if latin / total >= 0.6:
        return "en"
    return "other"


def _word_start(text: str, end: int) -> int:
    """Start of the whitespace-delimited word ending at ``end`` (exclusive)."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return start


def _starts_line(text: str, index: int) -> bool:
    """Only spaces or tabs stand between ``index`` and the previous line break (or the text start)."""
    while index > 0 and text[index - 1] in " \t":
        index -= 1
    return index == 0 or text[index - 1] == "\n"


def _is_english_period_boundary(text: str, match: re.Match[str], limit: int) -> bool:
    dots = match.group().rstrip(_CLOSERS)
    after = match.end()
    if after < limit and not text[after].isspace():
        # "3.14", "example.com", "v2.0" – no space after the dot, not a boundary.
        return is_cjk_char(text[after])
    following = after
    while following < limit and text[following].isspace():
        following += 1
    if following >= limit:
        return True
    if len(dots) == 1:
        start = _word_start(text, match.start())
        word = text[start : match.start()].lstrip("([{\"'“‘")
        if word.lower() in _ABBREVIATIONS:
            return False
        if len(word) == 1 and word.isalpha():  # an initial: "J. Smith"
            return False
        if word.isdigit() and _starts_line(text, start):  # a list number: "1. Install"
            return False
    return not text[following].islower()


def _is_line_break_boundary(text: str, pos: int, limit: int) -> bool:
    end_of_line = pos
    while end_of_line > 0 and text[end_of_line - 1] in " \t":
        end_of_line -= 1
    if end_of_line == 0 or text[end_of_line - 1] == "\n" or text[end_of_line - 1] in _LINE_END_TERMINATORS:
        return True
    next_line_end = text.find("\n", pos + 1, limit)
    next_line = text[pos + 1 : next_line_end if next_line_end != -1 else limit]
    if not next_line.strip() or _BLOCK_START_RE.match(next_line):
        return True
    # The current line itself is a list item / table row / heading: end it at its line break.
    line_start = text.rfind("\n", 0, pos) + 1
    return bool(_BLOCK_START_RE.match(text, line_start, pos))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of ``text``, stripped of surrounding whitespace, in order.

    Linear in the length of the text (no slicing per candidate), so megabyte files split quickly.
    """
    spans: list[tuple[int, int]] = []
    for p_start, p_end in _paragraph_spans(text):
        start = p_start
        for match in _CANDIDATE_RE.finditer(text, p_start, p_end):
            token = match.group()
            if token == "\n":
                boundary = _is_line_break_boundary(text, match.start(), p_end)
            elif token[0] in "。！？；…":
                boundary = True
            elif token[0] in "!?;":
                after = match.end()
                boundary = after >= p_end or text[after].isspace() or is_cjk_char(text[after])
            else:
                boundary = _is_english_period_boundary(text, match, p_end)
            if boundary:
                _append_stripped(spans, text, start, match.end())
                start = match.end()
        _append_stripped(spans, text, start, p_end)
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (English and Chinese), each stripped, none empty, in order."""
    return [text[s:e] for s, e in sentence_spans(text)]


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs separated by blank lines, stripped, none empty."""
    return [text[s:e] for s, e in _paragraph_spans(text)]


def _paragraph_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _PARAGRAPH_RE.finditer(text):
        _append_stripped(spans, text, start, match.start())
        start = match.end()
    _append_stripped(spans, text, start, len(text))
    return spans


def _append_stripped(spans: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))
