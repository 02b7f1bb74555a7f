"""Names a question writes in pinyin that the passages write in Chinese characters, and the reverse.

An English question about a Chinese document names its places, firms and people in pinyin ("the Nanzhou
metro"); a 1.5B model asked to translate it guesses the characters (a better-known city's) and the
search in Chinese misses. The passages themselves say how the name is written: a run of Han characters
whose toneless pinyin (``pypinyin``, its dictionary ships in the package) spells a word of the question.

Only words of two syllables or more are matched (four letters at least, two characters at least): a
single syllable reads as too many characters. Latin words are matched when capitalised (names), alone or
with the next capitalised word ("Wang Fang" → 王芳), hyphens and apostrophes dropped ("Xi'an").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:['’-][a-z]+)*")
MIN_LETTERS = 4
MAX_CHARACTERS = 4  # Chinese names of places, firms and people are two to four characters


def _key(latin: str) -> str:
    return re.sub(r"[\s'’-]", "", latin).lower()


def capitalised_names(text: str) -> list[str]:
    """Capitalised words of ``text`` and pairs of adjacent ones, as written."""
    words = list(_CAPITALISED.finditer(text))
    names = [w.group() for w in words]
    for first, second in zip(words, words[1:], strict=False):
        if text[first.end() : second.start()] == " ":
            names.append(f"{first.group()} {second.group()}")
    return [n for n in names if len(_key(n)) >= MIN_LETTERS]


@lru_cache(maxsize=4096)
def _readings(run: str) -> tuple[str, ...]:
    """Each character's toneless reading, read in context (pypinyin's phrase dictionary)."""
    from pypinyin import Style, lazy_pinyin

    return tuple(lazy_pinyin(run, style=Style.NORMAL))  # a character without a reading: the run is skipped


def han_spellings(keys: Iterable[str], texts: Iterable[str]) -> dict[str, str]:
    """For each pinyin key (lowercase letters), the run of Han characters in ``texts`` that reads as it
    (the most frequent one when several do)."""
    wanted = {k for k in keys if len(k) >= MIN_LETTERS}
    found: dict[str, Counter[str]] = {k: Counter() for k in wanted}
    if not wanted:
        return {}
    for text in texts:
        for match in _HAN_RUN.finditer(text):
            run = match.group()
            readings = _readings(run)
            if len(readings) != len(run):
                continue
            for start in range(len(run) - 1):
                spelled = ""
                for end in range(start, min(len(run), start + MAX_CHARACTERS)):
                    spelled += readings[end]
                    if end > start and spelled in wanted:
                        found[spelled][run[start : end + 1]] += 1
    return {k: c.most_common(1)[0][0] for k, c in found.items() if c}


def names_in_passage_script(question: str, passages: Sequence[str]) -> dict[str, str]:
    """The names of ``question`` that ``passages`` write in the other script, each with the passages'
    spelling: pinyin in the question and characters in the passages, or characters in the question
    and pinyin (capitalised) in the passages."""
    names = capitalised_names(question)
    spelled = han_spellings({_key(n) for n in names}, passages)
    pairs = {n: spelled[_key(n)] for n in names if _key(n) in spelled}
    if _HAN_RUN.search(question):
        passage_names = {_key(n): n for text in passages for n in capitalised_names(text)}
        spelled = han_spellings(passage_names, [question])
        pairs.update({han: passage_names[key] for key, han in spelled.items()})
    return _longest_first(pairs)


def _longest_first(pairs: dict[str, str]) -> dict[str, str]:
    """Drop a name inside a longer matched one ("Wang" when "Wang Fang" matched); longest first."""
    kept = {n: s for n, s in pairs.items() if not any(n != m and n in m for m in pairs)}
    return dict(sorted(kept.items(), key=lambda item: -len(item[0])))


def with_passage_spellings(question: str, names: dict[str, str], *, beside: bool = False) -> str:
    """``question`` with each name written as the passages write it, instead of the question's spelling
    or, with ``beside``, after it in brackets ("Who wrote Yuxiang (雨巷)?")."""
    for name, spelling in names.items():
        question = question.replace(name, f"{name} ({spelling})" if beside else spelling)
    return question
