"""The short answer: the few words of a checked answer that answer the question ("25 days", "Levi's
Stadium", "yes"), kept only when the sentences left after IsSup, or the passages they cite, state it.

The support judge proposes it in the same call that judges the sentences (``check_support``): reading
a short span out of a finished sentence suits the small local model, where asking the generator for an
"Answer:" line first did not (it wrote whole sentences there, and copied the prompt's example). A short
answer nothing kept backs is dropped rather than shown: it would be the one unchecked part.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from graphs.rag.lexicon import CITATION_MARKER, CJK, NUMBER, one_script

_CITATION = re.compile(r"\s*" + CITATION_MARKER.pattern)
_TRAILING = "。.！!；;，,：: \t"
SHORT_ANSWER_MAX_CHARS = 120
SHORT_ANSWER_MAX_WORDS = 10
SHORT_ANSWER_MAX_CJK = 30
BACKED_SHARE = 0.75  # of the short answer's words found in the evidence; its numbers must all be
_YES_NO = frozenset({"yes", "no", "是", "否", "不是", "对", "不对", "是的", "不"})
# A question offering a choice ("A or B?", "还是") is answered with one of its own words, not yes/no.
_CHOICE = re.compile(r"\b(or|either|whether)\b|还是|或者|或是", re.IGNORECASE)


def clean_short_answer(text: str) -> str:
    """Without citation markers, quotes, markdown emphasis and closing punctuation."""
    text = _CITATION.sub("", text).strip()
    previous = None
    while text != previous:  # '**"x".**' peels in turns
        previous = text
        text = text.strip().strip("*`\"“”'‘’").rstrip(_TRAILING)
    return text.strip()


def too_long(short: str) -> bool:
    """A whole sentence is no short answer (the judge sometimes copies the sentence it judged)."""
    cjk = len(CJK.findall(short))
    return (
        len(short) > SHORT_ANSWER_MAX_CHARS
        or cjk > SHORT_ANSWER_MAX_CJK
        or len(short.split()) > SHORT_ANSWER_MAX_WORDS
    )


def is_yes_no(short: str) -> bool:
    return short.lower().rstrip(_TRAILING) in _YES_NO or short.lower().startswith(("yes,", "no,"))


# A question answered by yes or no opens with an auxiliary verb ("Is", "Did", "Were both ...") or, in
# Chinese, ends in 吗 or asks 是否 / 是不是 / 有没有 (A-not-A).
_YES_NO_OPENING = re.compile(
    r"^\W*(?:and |but |so |also )?(?:is|are|was|were|am|do|does|did|can|could|will|would|shall|should|"
    r"may|might|must|has|have|had|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|can't|won't)\b",
    re.IGNORECASE,
)
_YES_NO_CHINESE = re.compile(r"吗\s*[？?。]?\s*$|是否|是不是|有没有|能不能|会不会|可不可以|对不对|能否|可否")


def asks_yes_no(question: str) -> bool:
    """The question is answered by yes or no, and offers no choice ("Is it A or B?" names A or B)."""
    if _CHOICE.search(question):
        return False
    return bool(_YES_NO_OPENING.search(question) or _YES_NO_CHINESE.search(question))


def backed_short_answer(short: str, evidence: Iterable[str], tokenize: Callable[[str], list[str]]) -> str:
    """``short`` (cleaned) when ``evidence`` (the kept sentences and the passages they cite) states it,
    else ``""``: every number in it appears there, and at least ``BACKED_SHARE`` of its words (of its
    characters, for Chinese). Yes/no stands on the sentences after it: kept whenever any evidence is."""
    short = clean_short_answer(short)
    evidence = [e for e in evidence if e.strip()]
    if not short or not evidence or too_long(short):
        return ""
    if is_yes_no(short):
        return short
    pool = one_script(" ".join(evidence))
    if any(number not in pool for number in NUMBER.findall(short)):
        return ""
    if CJK.search(short):
        wanted = [c for c in one_script(short) if c.isalnum()]
        present = sum(1 for c in wanted if c in pool)
    else:
        wanted = list(set(tokenize(short)))
        if not wanted:  # stop words only ("the one"): judged as text
            return short if short.lower() in pool.lower() else ""
        pool_words = set(tokenize(pool))
        present = sum(1 for w in wanted if w in pool_words)
    return short if wanted and present >= BACKED_SHARE * len(wanted) else ""


def sentences_stating(short: str, sentences: list[str], tokenize: Callable[[str], list[str]]) -> list[str]:
    """The sentences the answer needs: those that state ``short`` on their own, when some do and it is
    not a yes/no (a small model pads a fact with the rest of its passage); otherwise all of them (an
    answer spread over several sentences, or none to go by)."""
    if not short or is_yes_no(short):
        return sentences
    stating = [s for s in sentences if backed_short_answer(short, [s], tokenize)]
    return stating or sentences


def only_repeats_the_question(short: str, question: str, tokenize: Callable[[str], list[str]]) -> bool:
    """The short answer is made of the question's own words ("Tesla" for "Who did Tesla think would
    run the world?"): the judge picked the subject, not the answer. A question offering a choice
    ("A or B?", "还是") is answered with its own words, so it is exempt."""
    if not short or is_yes_no(short) or _CHOICE.search(question):
        return False
    if CJK.search(short):
        return all(c in question for c in short if c.isalnum())
    words = set(tokenize(short))
    return bool(words) and words <= set(tokenize(question))


def answers_another_question(short: str, question: str, tokenize: Callable[[str], list[str]]) -> bool:
    """The short answer cannot be the answer to ``question``: it only repeats the question's words, or
    it is a yes/no to a question that does not ask yes or no ("yes" to "What conquest ...?")."""
    if not short:
        return False
    return only_repeats_the_question(short, question, tokenize) or (
        is_yes_no(short) and not asks_yes_no(question)
    )
