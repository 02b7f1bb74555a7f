"""What a question asks for *besides*: "What else did Li Wei write besides Sparse Tricks?", "除了《山风》
还获得过什么奖？", or any "what else / any others / 还有吗" follow-up after an answer named something.

An answer that names only what the question excludes answers the previous question again. The follow-up
benchmark's en-22 ("Who wrote Sparse Tricks?" → Li Wei; "What other paper did Li Wei write?") was
rewritten to "... besides 'Sparse Tricks'?", and the 1.5B generator still answered "Li Wei also wrote
'Sparse Tricks'". ``check_support`` finds such an answer, and it is written again (once) told what not
to repeat, then refused. ``asks_for_more`` (another one, or more of it) also tells ``reuse_or_retrieve``
that the previous passages are not what a follow-up wants.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from graphs.rag.lexicon import LIST_SEPARATORS

# Asking for another one ("what else?", "还有吗"), and, wider, for more of it as well ("additional", "此外").
_ANOTHER = re.compile(
    r"\b(?:else|other|others|another|besides)\b|还有|其他|其它|别的|另外|另一|除了", re.IGNORECASE
)
_MORE = re.compile(r"\b(?:additional|more)\b|此外", re.IGNORECASE)
_EXCLUDING_EN = re.compile(
    r"\b(?:besides|other than|apart from|aside from|except(?: for)?|excluding|in addition to)\s+"
    r"(?P<item>[^?？,，;；.!]+?)"
    # an unquoted item ends where the question's own verb starts ("other than X did Ana write")
    r"(?=\s+(?:did|does|do|is|are|was|were|has|have|had|can|could|will|would|that|which|who)\b|[?？,，;；.!]|$)",
    re.IGNORECASE,
)
_EXCLUDING_ZH = re.compile(r"除了(?P<item>.+?)(?:以外|之外|外|[，,？?。；;]|还|$)")
# A named item in an answer or question: a quoted span or a Chinese title in 《》.
_NAMED = re.compile(r"[\"“”]([^\"“”]{2,80})[\"“”]|'([^']{2,80})'|‘([^’]{2,80})’|《([^》]{1,40})》")
_EDGES = " \t\"“”'‘’《》「」"


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip(_EDGES)).casefold()


def asks_for_more(message: str) -> bool:
    """The message asks for what the last answer did not give: something else, another, more."""
    return asks_for_another(message) or bool(_MORE.search(message))


# Not a request for another item: "the other office" names a known thing (asked about, not asked for),
# and a leading "另外，" only moves on to a new question ("besides that, ...").
_REFERENCE_NOT_REQUEST = re.compile(r"\bthe other\b(?!\s+ones?\b)|^\s*另外\s*[，,]", re.IGNORECASE)


def asks_for_another(message: str) -> bool:
    """The message asks for something other than what the last answer gave ("what else?", "any
    others?", "还有吗？"), not for more about it."""
    return bool(_ANOTHER.search(_REFERENCE_NOT_REQUEST.sub(" ", message)))


def named_items(text: str) -> list[str]:
    """The quoted spans and 《》 titles of ``text``, in order."""
    return [next(g for g in match.groups() if g) for match in _NAMED.finditer(text)]


def without_exclusions(question: str) -> str:
    """``question`` without its "besides X" / "除了X以外" phrase: what scores passages for it (the
    excluded X would otherwise pick the very sentence the question does not want)."""
    for pattern in (_EXCLUDING_EN, _EXCLUDING_ZH):
        question = pattern.sub(lambda m: m.group(0)[len(m.group(0).rstrip("？?，,。；;")) :], question)
    question = re.sub(r"\s+([?？,，.。])", r"\1", re.sub(r"\s{2,}", " ", question))
    return question.strip().lstrip("，,、；;").strip()


def excluded_items(question: str, message: str = "", previous_short_answer: str = "") -> list[str]:
    """What ``question`` (standalone) asks for something other than: the item after "besides / other
    than / except / 除了" (its quoted title when it has one), and, when the user's ``message`` asks for
    another one ("what else?"), what the previous answer gave."""
    items: list[str] = []
    for match in [*_EXCLUDING_EN.finditer(question), *_EXCLUDING_ZH.finditer(question)]:
        phrase = match.group("item")
        items.extend(named_items(phrase) or [phrase])
    if previous_short_answer and asks_for_another(message):
        items.append(previous_short_answer)
    kept: dict[str, str] = {}  # one per normal form, first spelling kept
    for item in items:
        kept.setdefault(_normal(item), item.strip(_EDGES))
    kept.pop("", None)
    return list(kept.values())


def repeated_exclusions(short_answer: str, answer: str, excluded: Iterable[str]) -> list[str]:
    """The excluded items an answer gives as its answer: every item it names (its short answer, its
    quoted spans and 《》 titles) is one of them. An answer naming something else as well is fine
    ("Besides 'Sparse Tricks', Li Wei wrote 'Fusion at Scale'")."""
    excluded = [e for e in excluded if _normal(e)]
    named = [n for n in [short_answer, *named_items(answer)] if _normal(n)]
    if not excluded or not named:
        return []
    repeated: list[str] = []
    # a name that lists several items ("two ATR 42s and two Twin Otters") repeats the exclusion only
    # when each of its items is excluded
    parts = [part for name in named for part in LIST_SEPARATORS.split(name) if _normal(part)]
    for part in parts:
        hit = next((e for e in excluded if _normal(e) in _normal(part) or _normal(part) in _normal(e)), None)
        if hit is None:
            return []
        if hit not in repeated:
            repeated.append(hit)
    return repeated
