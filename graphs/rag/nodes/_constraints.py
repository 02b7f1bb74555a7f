"""Does a passage state the asked fact *for the asked constraint*, or only the topic?

Small models answer a question about 2021 from a passage about 2025, or invent the figure outright
(RGB's negative rejection: 87 of 100 answered from same-topic passages). Two checks, both without an
LLM call:

- ``unstated_numbers``: a number in an answer sentence that neither its cited passages nor the question
  contain was not read from the sources (IsSup then counts the sentence as unsupported);
- ``unmet_constraints``: the question's constraints (a year, an ordinal such as 第七届) must appear near
  the short answer in a cited passage — within ``CONSTRAINT_WINDOW`` sentences of a sentence stating it
  (calibrated by ``bench/negative_constraints.py`` on RGB zh_refine questions 100–299).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphs.rag.lexicon import (
    CITATION_MARKER,
    MONTHS_AND_SEASONS,
    NUMBER,
    ORDINAL_ZH,
    YEAR,
    numbers_in,
    one_script,
    plain_number,
)
from tools.knowledge_base.text_units import split_sentences

CONSTRAINT_WINDOW = 1  # sentences either side of the one stating the short answer


def unstated_numbers(sentence: str, passages: Sequence[str], question: str) -> list[str]:
    """Numbers of ``sentence`` found neither in ``passages`` nor in ``question``, in order."""
    known = numbers_in(question)
    for passage in passages:
        known |= numbers_in(passage)
    seen: list[str] = []
    for number in NUMBER.findall(CITATION_MARKER.sub(" ", sentence)):
        plain = plain_number(number)
        if plain not in known and not _within_a_known_number(plain, known) and plain not in seen:
            seen.append(plain)
    return seen


def _within_a_known_number(number: str, known: set[str]) -> bool:
    """'6' of '6.4%' read as a partial match is still read from the source ("6.4" is known)."""
    return any(k.startswith(number + ".") for k in known)


_WORD_BEFORE = re.compile(r"([A-Za-z][\w'’.-]*)\s+$")


def _is_a_label(question: str, start: int) -> bool:
    before = _WORD_BEFORE.search(question[:start])
    if before is None or not before.group(1)[0].isupper() or not question[: before.start()].strip():
        return False  # no word before, a lower-case one, or the question's first word ("In 2019, ...")
    return before.group(1).rstrip(".").lower() not in MONTHS_AND_SEASONS


def question_constraints(question: str) -> list[str]:
    """The constraints an answer must hold for: the years and Chinese ordinals the question names (a
    number labelled by a capitalised word, "Suite 2001", is not a year)."""
    years = [m.group(1) for m in YEAR.finditer(question) if not _is_a_label(question, m.start())]
    return list(dict.fromkeys([*years, *ORDINAL_ZH.findall(question)]))


def unmet_constraints(
    short_answer: str, constraints: Sequence[str], passages: Sequence[str], window: int = CONSTRAINT_WINDOW
) -> list[str]:
    """The constraints that no passage states within ``window`` sentences of the short answer; ``[]`` when
    all are met, or when no passage sentence contains the short answer (nothing to judge: other checks
    handle that)."""
    if not short_answer or not constraints:
        return []
    needle = plain_number(one_script(short_answer.lower()))
    as_asked = {one_script(c): c for c in constraints}  # compared in one script, reported as asked
    constraints = list(as_asked)
    best: list[str] | None = None
    for passage in passages:
        sentences = split_sentences(one_script(passage))
        for i, sentence in enumerate(sentences):
            if needle not in plain_number(sentence.lower()):
                continue
            nearby = " ".join(sentences[max(0, i - window) : i + window + 1])
            missing = [c for c in constraints if c not in nearby]
            if not missing:
                return []
            if best is None or len(missing) < len(best):
                best = missing
    return [as_asked[c] for c in best or []]
