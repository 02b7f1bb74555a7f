"""Answer sentences and their ``[n]`` citations."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from tools.knowledge_base.text_units import split_sentences

# [1], [1][2], [1, 2], [1，2], 【1】 — the forms models actually write.
_CITATION = re.compile(r"[\[【]\s*(\d{1,3}(?:\s*[,，、;]\s*\d{1,3})*)\s*[\]】]")
# Markers a sentence splitter left at the start of the next sentence ("... leave. [2] The policy ...").
_LEADING_CITATIONS = re.compile(r"^((?:\s*[\[【]\s*\d{1,3}(?:\s*[,，、;]\s*\d{1,3})*\s*[\]】])+)\s*[.。]?\s*")


@dataclass
class AnswerSentence:
    text: str
    citations: list[int] = field(default_factory=list)


def cited_numbers(text: str) -> list[int]:
    """Every passage number cited in ``text``, in order, without repeats."""
    seen: list[int] = []
    for match in _CITATION.finditer(text):
        for number in re.split(r"\s*[,，、;]\s*", match.group(1)):
            n = int(number)
            if n not in seen:
                seen.append(n)
    return seen


def normalise_citations(text: str, valid: Collection[int]) -> str:
    """Rewrite citation markers as ``[1][2]`` and drop numbers that are not passages of this answer."""

    def rewrite(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"\s*[,，、;]\s*", match.group(1))]
        kept = [n for n in numbers if n in valid]
        return "".join(f"[{n}]" for n in kept)

    return re.sub(r"[ \t]{2,}", " ", _CITATION.sub(rewrite, text)).strip()


def answer_sentences(text: str) -> list[AnswerSentence]:
    """Split an answer into sentences; markers after a full stop ("... days. [1]") belong to the
    sentence before them, even when the splitter put them at the start of the next one."""
    sentences: list[AnswerSentence] = []
    for raw in split_sentences(text):
        raw = raw.strip()
        leading = _LEADING_CITATIONS.match(raw)
        if leading and sentences:
            previous = sentences[-1]
            previous.text = f"{previous.text} {leading.group(1).strip()}"
            previous.citations = cited_numbers(previous.text)
            raw = raw[leading.end() :].strip()
        if raw:
            sentences.append(AnswerSentence(text=raw, citations=cited_numbers(raw)))
    return sentences


def join_sentences(sentences: list[str]) -> str:
    """Join sentences back, with a space between Latin sentences and none after Chinese punctuation."""
    out = ""
    for sentence in sentences:
        if out and not out.endswith(("。", "！", "？", "；", "\n")):
            out += " "
        out += sentence
    return out
