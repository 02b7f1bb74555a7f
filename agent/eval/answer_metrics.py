"""How an answer is scored against a benchmark's gold (the metrics of ``ragpilot eval qa`` and ``bench/``).

What is computed, exactly
-------------------------
The answer text is scored with its inline citation markers (``[1]``, ``[2, 3]``) removed; a refused
answer is scored as the empty string.

- **Normalisation.** English (SQuAD's official script): lower-case, drop ASCII punctuation, drop the
  articles a/an/the, collapse whitespace; tokens are the remaining words. Chinese (mixed segmentation,
  as in MLQA / CMRC): lower-case, Traditional characters folded onto Simplified (an answer in the user's
  script matches a gold written in the other), drop ASCII and CJK punctuation and whitespace; every CJK
  character is one token and every run of latin letters/digits is one token.
- **em**: normalised short answer == normalised gold (max over the gold aliases), SQuAD's EM. The
  short answer is ``Answer.short_answer``; an answer without one is scored on its sentences instead.
- **f1**: token-overlap F1 (bag of tokens) between the short answer (as for em) and the gold, max over
  aliases: SQuAD's F1.
- **f1_full_text**: the same F1 over everything shown (short answer and sentences), as runs before the
  short answer scored; **f1_best_sentence**: the F1 of its best single sentence.
- **contained** ("answer contained" / "match", the accuracy of RGB and of Self-RAG's PopQA/TriviaQA
  evaluation): every gold group is found in the text shown (short answer and sentences): for English as a contiguous run of normalised
  tokens (so "no" does not match "not"), for Chinese as a substring of the normalised text. RGB
  answers with several required parts count only when all are present (RGB's rule).
- **supporting_recall@k** (HotpotQA): the share of the gold supporting-fact titles among the first
  ``k`` distinct documents the agent retrieved (all retrieve steps, in order); **cited_recall**: the
  share among the documents its answer cites. A direct (no-retrieval) answer scores 0 on both.
- **refusal_rate**: share of answers the agent refused (``Answer.refused``). On RGB with
  ``negative_only`` (no positive passage indexed) this is RGB's rejection rate: higher is better.
- **support**: Self-RAG IsSup verdicts over all answer sentences: the shares judged fully / partially
  / not supported, stated (no judge: code found the words) and unchecked; ``supported_share`` = fully /
  (all judged, i.e. neither stated nor unchecked).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from tools.chinese_script import fold_to_simplified
from tools.knowledge_base.text_units import is_cjk_char, split_sentences

_CITATION_MARKER = re.compile(r"\s?[\[【]\s*\d{1,3}(?:\s*[,，、;]\s*\d{1,3})*\s*[\]】]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CJK_PUNCTUATION = "，。！？；：、“”‘’（）《》〈〉【】『』「」〔〕…—～·．－｜"
_PUNCTUATION = frozenset(string.punctuation + _CJK_PUNCTUATION)
_LATIN_RUN = re.compile(r"[a-z0-9]+")


def strip_citations(text: str) -> str:
    """The answer without its inline citation markers (``[1]``, ``[2, 3]``, ``【1】``)."""
    return _CITATION_MARKER.sub("", text).strip()


def normalize_english(text: str) -> str:
    """SQuAD v1.1's ``normalize_answer``: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def normalize_chinese(text: str) -> str:
    """Lower case, one script, without ASCII/CJK punctuation and whitespace (character-level comparison)."""
    folded = fold_to_simplified(text.lower())
    return "".join(ch for ch in folded if ch not in _PUNCTUATION and not ch.isspace())


def answer_tokens(text: str, language: str) -> list[str]:
    """English: SQuAD-normalised words. Chinese: one token per CJK character, one per latin/digit run."""
    if language != "zh":
        return normalize_english(text).split()
    tokens: list[str] = []
    latin: list[str] = []
    for ch in normalize_chinese(text):
        if is_cjk_char(ch):
            if latin:
                tokens.append("".join(latin))
                latin = []
            tokens.append(ch)
        elif _LATIN_RUN.fullmatch(ch):
            latin.append(ch)
        else:  # other scripts or symbols: their own token
            if latin:
                tokens.append("".join(latin))
                latin = []
            tokens.append(ch)
    if latin:
        tokens.append("".join(latin))
    return tokens


def _normalized(text: str, language: str) -> str:
    return normalize_chinese(text) if language == "zh" else normalize_english(text)


def exact_match(prediction: str, golds: Sequence[str], language: str) -> float:
    """1.0 when the normalised prediction equals one normalised gold answer, else 0.0."""
    predicted = _normalized(prediction, language)
    return float(any(predicted == _normalized(gold, language) for gold in golds))


def _f1(predicted: list[str], gold: list[str]) -> float:
    common = Counter(predicted) & Counter(gold)
    overlap = sum(common.values())
    if not predicted or not gold:
        return float(predicted == gold)
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(predicted), overlap / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: Sequence[str], language: str) -> float:
    """Bag-of-tokens F1 between the prediction and the best-matching gold answer."""
    predicted = answer_tokens(prediction, language)
    return max((_f1(predicted, answer_tokens(gold, language)) for gold in golds), default=0.0)


def best_sentence_f1(prediction: str, golds: Sequence[str], language: str) -> float:
    """The F1 of the prediction's best single sentence (the whole prediction when it has one)."""
    sentences = split_sentences(prediction) or [prediction]
    return max(token_f1(sentence, golds, language) for sentence in sentences)


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    if not needle:
        return False
    width = len(needle)
    return any(haystack[i : i + width] == needle for i in range(len(haystack) - width + 1))


def answer_contained(prediction: str, answer_groups: Sequence[Sequence[str]], language: str) -> bool:
    """True when every gold group has an alias inside the prediction (RGB's accuracy rule)."""
    if language == "zh":
        predicted = normalize_chinese(prediction)
        return all(
            any((alias := normalize_chinese(gold)) and alias in predicted for gold in group)
            for group in answer_groups
        )
    words = normalize_english(prediction).split()
    return all(
        any(_contains_run(words, normalize_english(gold).split()) for gold in group)
        for group in answer_groups
    )


def reference_answers(answer_groups: Sequence[Sequence[str]]) -> list[str]:
    """The gold strings EM/F1 compare against: the aliases of a single group, or (several required
    parts, RGB) one string of every part's first alias."""
    if len(answer_groups) == 1:
        return list(answer_groups[0])
    return [" ".join(group[0] for group in answer_groups)]


def recall_of(gold: Sequence[str], found: Sequence[str]) -> float:
    if not gold:
        return 0.0
    return len(set(gold) & set(found)) / len(set(gold))
