"""A follow-up that points into the list the previous answer gave ("the second one", "那第二部", "后者").

The small model resolves such a reference poorly: "王磊写过两部小说：《海上》和《山风》" then "那第二部是哪年
出版的？" came back as a question about 《海上》. Which item "the second" is depends only on the order the
answer listed them in, so it is resolved here, without a model: the reference is replaced by the item.
"""

from __future__ import annotations

import re

from graphs.rag.lexicon import ENGLISH_ORDINALS, LIST_SEPARATORS, zh_numeral_value
from graphs.rag.nodes._citations import without_citations

# 第二部 / 第二款 / 第二个 … (a measure word for an item), not 第七届 / 第二次 / 第二名 (an edition, a
# time, a rank: those are constraints of the question itself).
_CHINESE_ORDINAL = re.compile(
    r"(?:那)?第([一二三四五六七八九十]|\d{1,2})(?:[部款个篇本首家种位项条所座只件门道张份])"
    r"(?!季度|月|周|星期|年|小时|阶段|学期|世纪)"  # 第二个季度: a period, not an item
)
_CHINESE_FORMER_LATTER = re.compile(r"(前者|后者|最后一[部款个篇本首家种位项条所座只件门道张份])")
_ENGLISH_ORDINAL = re.compile(
    r"\bthe (first|second|third|fourth|fifth|last|latter|former)(?: one)?\b(?![- ]?(?:largest|biggest|"
    r"oldest|newest|smallest|longest|highest|best|most|least|time|edition|place))",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"《[^》]{1,40}》|“[^”]{1,40}”|\"[^\"]{1,40}\"")
_LIST_INTRODUCERS = re.compile(r"[：:]|包括|分别是|有")


def ordinal_in(question: str) -> tuple[str, int] | None:
    """(the words that point into a list, the item's position: 1-based, -1 = last) or None."""
    if match := _CHINESE_ORDINAL.search(question):
        number = match.group(1)
        return match.group(0), int(number) if number.isdigit() else zh_numeral_value(number)
    if match := _CHINESE_FORMER_LATTER.search(question):
        return match.group(0), 1 if match.group(0) == "前者" else -1
    if match := _ENGLISH_ORDINAL.search(question):
        word = match.group(1).lower()
        return match.group(0), -1 if word in ("last", "latter") else ENGLISH_ORDINALS[word]
    return None


def listed_items(answer: str) -> list[str]:
    """The items the answer's first listing sentence enumerates, in order: quoted titles or names when
    there are several, else the parts of the clause after "：" / "包括" / ":" split at 和、, and."""
    for sentence in re.split(r"(?<=[。！？.!?])\s*", without_citations(answer)):
        quoted = _QUOTED.findall(sentence)
        if len(quoted) >= 2:
            return quoted
        introducer = list(_LIST_INTRODUCERS.finditer(sentence))
        if not introducer:
            continue
        clause = sentence[introducer[-1].end() :].strip().rstrip("。.!！?？ ")
        items = [item.strip() for item in LIST_SEPARATORS.split(clause) if item and item.strip()]
        if len(items) >= 2 and all(len(item) <= 40 for item in items):
            return items
    return []


# What may follow an English ordinal that stands for a listed item: nothing, "of them", "'s".
_STANDS_ALONE = re.compile(r"^(?:\s*$|\s*[?.!,;:]|'s\b|’s\b)")
_OF_THEM = re.compile(r"^\s+of (?:them|these|those)\b", re.IGNORECASE)


def reference_span(question: str, words: str, items: list[str]) -> str | None:
    """The words of ``question`` to replace by the item, or None when the ordinal heads a noun of its
    own ("the first director" counts something else than the list). "the first one", "the second of
    them", "the latter's" and a noun the items share ("the second wing") point into the list. Chinese
    is left as found: 第一款售价 (an attribute) and 第一个导演 (a new noun) read alike without a parser."""
    if not words.isascii() or words.lower().endswith(" one"):
        return words
    rest = question[question.index(words) + len(words) :]
    if _STANDS_ALONE.match(rest):
        return words
    if of_them := _OF_THEM.match(rest):
        return words + of_them.group(0)
    following = rest.split()[0].strip("?.!,;:")  # a word follows: _STANDS_ALONE took blank endings
    if following.lower() in {w.lower() for item in items for w in item.split()}:
        return words + rest[: rest.index(following) + len(following)]
    return None


def resolve_list_reference(question: str, previous_answer: str) -> str | None:
    """The question with its ordinal reference replaced by the listed item it names, or None when it
    has none, the previous answer lists too few items for it, or the ordinal heads a noun of its own."""
    found = ordinal_in(question)
    if found is None:
        return None
    words, position = found
    items = listed_items(previous_answer)
    span = reference_span(question, words, items) if len(items) >= 2 else None
    if span is None or position > len(items):
        return None
    item = items[position - 1] if position > 0 else items[-1]
    return question.replace(span, item, 1)
