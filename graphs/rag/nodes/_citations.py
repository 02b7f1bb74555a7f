"""Answer sentences and their ``[n]`` citations."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from itertools import combinations

from graphs.rag.lexicon import CITATION_MARKER, CJK_RUN, numbers_in, one_script
from tools.knowledge_base.text_units import detect_language, split_sentences

_CITATION = CITATION_MARKER
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


def without_citations(text: str) -> str:
    """``text`` with its citation markers removed."""
    return re.sub(r"\s+([.。,，])", r"\1", _CITATION.sub("", text)).strip()


def normalise_citations(text: str, valid: Collection[int]) -> str:
    """Rewrite citation markers as ``[1][2]`` and drop numbers that are not passages of this answer."""

    def rewrite(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"\s*[,，、;]\s*", match.group(1))]
        kept = [n for n in numbers if n in valid]
        return "".join(f"[{n}]" for n in kept)

    return re.sub(r"[ \t]{2,}", " ", _CITATION.sub(rewrite, text)).strip()


# A list's number the splitter cut off from its item: alone ("2.") or after the list's colon ("包括：1.").
_LIST_NUMBER_END = re.compile(r"(?:^|[：:]\s*)\d{1,2}\.$")


def _extend(sentence: AnswerSentence, tail: str) -> None:
    """Append ``tail`` (markers or punctuation the splitter cut off) to ``sentence``."""
    sentence.text += tail
    sentence.citations = cited_numbers(sentence.text)


def answer_sentences(text: str) -> list[AnswerSentence]:
    """Split an answer into sentences; markers after a full stop ("... days. [1]") belong to the
    sentence before them, even when the splitter put them at the start of the next one, a list's
    number ("2.", "优点包括：1.") belongs to the item after it, and punctuation alone ("…") to the
    sentence before it."""
    sentences: list[AnswerSentence] = []
    carried = ""
    for raw in split_sentences(text):
        raw = raw.strip()
        leading = _LEADING_CITATIONS.match(raw)
        if leading and sentences:
            _extend(sentences[-1], f" {leading.group(1).strip()}")
            raw = raw[leading.end() :].strip()
        raw, carried = f"{carried} {raw}".strip(), ""
        if _LIST_NUMBER_END.search(raw) and not _CITATION.search(raw):
            carried = raw
        elif raw and sentences and not any(c.isalnum() for c in _CITATION.sub("", raw)):
            _extend(sentences[-1], raw)  # "…" or "——" alone says nothing: it ends the sentence before
        elif raw:
            sentences.append(AnswerSentence(text=raw, citations=cited_numbers(raw)))
    if carried:
        sentences.append(AnswerSentence(text=carried))
    return sentences


def join_sentences(sentences: list[str]) -> str:
    """Join sentences back, with a space between Latin sentences and none after Chinese punctuation."""
    out = ""
    for sentence in sentences:
        if out and not out.endswith(("。", "！", "？", "；", "\n")):
            out += " "
        out += sentence
    return out


def _units(text: str, tokenize: Callable[[str], list[str]]) -> set[str]:
    """Words of the Latin text and character bigrams of the Chinese, in one script (word segmentation
    of a short sentence and of its source passage disagree too often to compare their words)."""
    text = one_script(text)
    units = set(tokenize(CJK_RUN.sub(" ", text)))
    for run in CJK_RUN.findall(text):
        units.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return units


def word_share(sentence: str, passage: str, tokenize: Callable[[str], list[str]]) -> float:
    """The share of ``sentence``'s words (Chinese: character bigrams) that ``passage`` holds."""
    words = _units(_CITATION.sub("", sentence), tokenize)
    return len(words & _units(passage, tokenize)) / len(words) if words else 0.0


def word_share_across_languages(sentence: str, passage: str, tokenize: Callable[[str], list[str]]) -> float:
    """``word_share``, except that a sentence written in the other language than its passage is judged
    by what both languages write alike: a Chinese sentence by its Latin-script words and numbers (the
    names and figures it copied from an English passage); an English sentence by its numbers and by
    the Latin-script names and codes the Chinese passage holds ("Lucia", "AR-7"), its other words being
    translations. Such a sentence without any of them shares nothing (0)."""
    sentence_language = detect_language(_CITATION.sub("", sentence))
    passage_language = detect_language(passage)
    if sentence_language == passage_language or {sentence_language, passage_language} != {"en", "zh"}:
        return word_share(sentence, passage, tokenize)
    words = _units(_CITATION.sub("", sentence), tokenize)
    held = _units(passage, tokenize)
    if sentence_language == "zh":
        comparable = {w for w in words if not CJK_RUN.search(w)}
    else:
        comparable = {w for w in words if any(c.isdigit() for c in w)} | (words & held)
    return len(comparable & held) / len(comparable) if comparable else 0.0


# A sentence is attributed to a passage when at least this share of its content words are in it.
ATTRIBUTION_MIN_OVERLAP = 0.6


def attribute_uncited(
    text: str,
    passages: Mapping[int, str],
    tokenize: Callable[[str], list[str]],
    share: Callable[[str, str, Callable[[str], list[str]]], float] = word_share,
) -> tuple[str, list[dict[str, object]]]:
    """Cite the best-matching passage after each sentence the model left uncited (small models drop
    markers, above all in Chinese): the passage holding the largest ``share`` of the sentence's words,
    when that share reaches ``ATTRIBUTION_MIN_OVERLAP``. Returns the text and what was added; a
    sentence matching no passage well stays uncited (and IsSup calls it unsupported)."""
    sentences = answer_sentences(text)
    if not passages or all(s.citations for s in sentences):
        return text, []
    added: list[dict[str, object]] = []
    rewritten: list[str] = []
    for sentence in sentences:
        if not sentence.citations and _units(_CITATION.sub("", sentence.text), tokenize):
            n, overlap = max(
                ((n, share(sentence.text, body, tokenize)) for n, body in passages.items()),
                key=lambda pair: pair[1],
            )
            if overlap >= ATTRIBUTION_MIN_OVERLAP:
                rewritten.append(f"{sentence.text} [{n}]")
                added.append({"sentence": sentence.text[:120], "passage": n, "overlap": round(overlap, 2)})
                continue
        rewritten.append(sentence.text)
    return (join_sentences(rewritten), added) if added else (text, [])


def states_sentence(sentence: str, passage: str, tokenize: Callable[[str], list[str]]) -> bool:
    """``passage`` holds every number of ``sentence`` and at least ``ATTRIBUTION_MIN_OVERLAP`` of its words."""
    return numbers_in(sentence) <= numbers_in(passage) and (
        word_share(sentence, passage, tokenize) >= ATTRIBUTION_MIN_OVERLAP
    )


def bridging_pair(
    sentence: str, passages: Mapping[int, str], tokenize: Callable[[str], list[str]]
) -> tuple[int, int] | None:
    """Two passages that state ``sentence`` together (every number, ``ATTRIBUTION_MIN_OVERLAP`` of its
    words) and share one of its words, the bridge: "X, founded by Y, ..." in one and "Y was born in Z" in
    the other. Each must hold a word of the sentence the other lacks. Two passages with nothing of the
    sentence in common (one names the firm, the other another firm's figure) are no bridge. The pair
    holding most of its words, or None."""
    words = _units(_CITATION.sub("", sentence), tokenize)
    best: tuple[float, int, int] | None = None
    for (a, body_a), (b, body_b) in combinations(sorted(passages.items()), 2):
        held_a, held_b = _units(body_a, tokenize) & words, _units(body_b, tokenize) & words
        if not held_a & held_b or held_a <= held_b or held_b <= held_a:
            continue
        if states_sentence(sentence, f"{body_a}\n{body_b}", tokenize):
            share = len(held_a | held_b) / len(words)
            if best is None or share > best[0]:
                best = (share, a, b)
    return None if best is None else (best[1], best[2])


def repoint_citations(
    text: str, passages: Mapping[int, str], tokenize: Callable[[str], list[str]], *, bridges: bool = False
) -> tuple[str, list[dict[str, object]]]:
    """Cite the passage that states a sentence instead of the ones it cites, when those do not state it
    (a number of the sentence missing from them, or less than ``ATTRIBUTION_MIN_OVERLAP`` of its words)
    and one other passage does: the one holding most of its words. A small reader often cites the
    neighbouring passage, and every check reads only the passages a sentence cites. With ``bridges``
    (``graph.cite_bridges``), when no one passage states it, the two that state it together over a
    shared name (``bridging_pair``) are cited: a multi-hop answer's bridge and answer sit in different
    passages and the reader cites one of them. A sentence no passage (or pair) states, or one its own
    passages state together, keeps its citations. Returns the text and what was changed."""
    changed: list[dict[str, object]] = []
    rewritten: list[str] = []
    for sentence in answer_sentences(text):
        cited = "\n".join(passages[n] for n in sentence.citations if n in passages)
        if sentence.citations and not states_sentence(sentence.text, cited, tokenize):
            others = [
                (word_share(sentence.text, body, tokenize), n)
                for n, body in passages.items()
                if n not in sentence.citations and states_sentence(sentence.text, body, tokenize)
            ]
            to: list[int] = []
            if others:
                to = [max(others, key=lambda pair: (pair[0], -pair[1]))[1]]  # ties: the first passage
            elif bridges and (pair := bridging_pair(sentence.text, passages, tokenize)) is not None:
                to = list(pair)
            if to:
                marks = "".join(f"[{n}]" for n in to)
                rewritten.append(f"{without_citations(sentence.text)} {marks}")
                changed.append(
                    {
                        "sentence": sentence.text[:120],
                        "from": sentence.citations,
                        "to": to[0] if len(to) == 1 else to,
                    }
                )
                continue
        rewritten.append(sentence.text)
    return (join_sentences(rewritten), changed) if changed else (text, [])
