"""Simplified and Traditional Chinese: which script a text is written in, a text put into the
Traditional script without rewriting what is already Traditional, and a text folded onto Simplified
for matching (BM25 terms, whatever the script of the question or the document).

OpenCC's character dictionaries decide (``opencc-purepy``: the OpenCC data as text, in pure Python,
so no native code). ``STCharacters`` lists, for each Simplified character, its Traditional forms;
when a character is not among its own forms (发 → 發 髮) it is written only in Simplified. The same
holds the other way for ``TSCharacters`` (發 → 发). Characters both scripts write (台, 吃, 里 …) count
for neither, and are never converted: OpenCC's own ``s2t`` writes 臺 for 台 and 喫 for 吃, which a
reader in Taipei would not, and which would no longer match the passage the answer came from.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Literal

ChineseScript = Literal["simplified", "traditional"]


@lru_cache(maxsize=2)
def _one_script_conversions(dictionary: str) -> dict[str, list[str]]:
    """The entries of an OpenCC character dictionary whose key is not among its own conversions (发 →
    發 髮): characters written in one script only, each with its forms in the other."""
    text = resources.files("opencc_purepy").joinpath("dicts", dictionary).read_text(encoding="utf-8")
    only: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, _, forms = line.partition("\t")
        if key and forms.split() and key not in forms.split():
            only[key] = forms.split()
    return only


def _simplified_only() -> dict[str, list[str]]:
    return _one_script_conversions("STCharacters.txt")


def _traditional_only() -> dict[str, list[str]]:
    return _one_script_conversions("TSCharacters.txt")


@lru_cache(maxsize=1)
def _fold_table() -> dict[int, str]:
    """Each character only Traditional writes -> its first Simplified form (``str.translate``'s table)."""
    return {ord(key): forms[0] for key, forms in _traditional_only().items() if len(key) == 1}


@lru_cache(maxsize=1)
def _s2t():  # type: ignore[no-untyped-def]  # opencc_purepy is untyped
    from opencc_purepy import OpenCC

    return OpenCC("s2t")


def chinese_script(text: str) -> ChineseScript | None:
    """The script ``text`` is written in, by its characters that only one script writes; None when it
    has none of either (English, digits, or only characters both scripts share)."""
    simplified_only, traditional_only = _simplified_only(), _traditional_only()
    simplified = sum(1 for c in text if c in simplified_only)
    traditional = sum(1 for c in text if c in traditional_only)
    if simplified == traditional == 0:
        return None
    return "traditional" if traditional > simplified else "simplified"


def to_traditional(text: str) -> str:
    """``text`` in the Traditional script: only characters that Traditional text never uses change,
    each to the form OpenCC chooses in its phrase (头发 → 頭髮, 发现 → 發現)."""
    simplified = _simplified_only()
    if not any(c in simplified for c in text):
        return text
    converted = _s2t().convert(text)
    if len(converted) != len(text):  # a phrase changed length: convert character by character
        converted = "".join(_s2t().convert(c) if c in simplified else c for c in text)
    return "".join(new if old in simplified else old for old, new in zip(text, converted, strict=True))


def fold_to_simplified(text: str) -> str:
    """``text`` with every character only Traditional writes in its Simplified form (發 → 发, 這 → 这),
    character by character: for matching, not for display (a character both scripts write stays)."""
    return text.translate(_fold_table())
