"""CRAG's decompose-then-recompose: cut passages into strips, keep the relevant ones, best passage first.

A strip is a sentence (a very short one joins the sentence before it in its paragraph; table rows stay
whole). Each strip is scored against the question (and, on the iterative route, the reasoning sentences,
and a retry's translations) two ways: BM25 over the strips (``rank-bm25``, the knowledge base's own
tokenizer: jieba for Chinese, stemming for English), normalised by the best strip, and multilingual-e5
cosine similarity. A strip is relevant when its BM25 score is at least ``LEXICAL_KEEP`` of the best, or
its cosine is within ``DENSE_MARGIN`` of the best cosine (e5 cosines sit in a narrow band, so a margin
reads them better than a ratio; the dense side also carries cross-lingual questions, where BM25 sees
nothing). Relevant strips are taken best first (their mixed score) until the context token budget is
spent, then put back in document order; passages left without a strip never reach the prompt. The
passages go best strip first (``graph.context_order: relevance``, the default) or in the retrieval's
order (``document``); after the generator's NOT_FOUND, ``graph.narrow_after_not_found`` keeps only the
best few strips. No LLM call. (Whole passages on the iterative route, so that a later hop's passage about
the bridge entity is not cut for scoring low against the question, were measured on 26 iterative
questions: none won, one lost for good — the longer context misled the 1.5B reader; docs/benchmarks.md,
session 16. So did a bar set per query instead of one for all, which kept the strips the question points
to beside those a reasoning sentence copies: 1 won, 4 lost on the 34 multi-hop questions; and a
paragraph's first sentence kept with a later one ("She studied ..." with the sentence naming her) changed
none of them; session 38.) Injected instructions are not filtered here: retrieved text reaches a prompt
only inside ``<passage>`` delimiters it cannot close, as data (``_passages``); a regex filter that stood
here caught 0 of 12 injections written after it was frozen (``bench/prompt_injection.py``) and was
removed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig
from rank_bm25 import BM25Okapi

from graphs.rag.nodes._passages import hits_from_state, passage_from_hit
from graphs.rag.nodes._question_facts import facts_of
from graphs.rag.nodes._rewrite import question_translations
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import ContextPassage, RagState
from tools.knowledge_base.records import Hit
from tools.knowledge_base.sparse import tokenize
from tools.knowledge_base.text_units import split_paragraphs, split_sentences
from tools.pinyin_names import with_passage_spellings
from tools.providers.embedder_base import Embedder

STRIP_MIN_CHARS = 40  # a shorter sentence ("See below.") is joined to the next one
MAX_STRIPS = 64  # bounds the embedding work of one refinement
LEXICAL_KEEP = 0.5  # relevant when BM25 reaches this share of the best strip's
DENSE_MARGIN = 0.05  # ... or when the e5 cosine is within this of the best strip's
BM25_WEIGHT = 0.5  # in the mixed score that orders strips for the budget
WHOLE_KINDS = ("row", "sheet_summary")


@dataclass
class Strip:
    passage: int  # index into the passages
    position: int  # order inside the passage
    text: str
    scoring_text: str  # the strip with its document title and headings, so "it" still matches


def _header(hit: Hit) -> str:
    parts = [hit.chunk.title, *hit.chunk.heading_path] if hit.chunk is not None else [hit.title]
    return " > ".join(p for p in parts if p)


def decompose(
    passages: Sequence[Hit],
    max_strips: int = MAX_STRIPS,
    follow_paragraphs: bool = True,
) -> list[Strip]:
    """Strips of every passage in order; at most ``max_strips`` (later passages are cut first)."""
    strips: list[Strip] = []
    for index, hit in enumerate(passages):
        header = _header(hit)
        whole = hit.chunk is not None and hit.chunk.kind in WHOLE_KINDS
        texts = [hit.text.strip()] if whole else sentence_strips(hit.text, follow_paragraphs)
        for position, text in enumerate(texts):
            strips.append(Strip(index, position, text, f"{header}\n{text}" if header else text))
            if len(strips) >= max_strips:
                return strips
    return strips


def sentence_strips(text: str, follow_paragraphs: bool = True) -> list[str]:
    """The strips of one passage's text.

    With ``follow_paragraphs`` (``graph.strips_follow_paragraphs``) a strip never crosses a blank line,
    and a short sentence joins the strip before it, which it mostly continues ("Its manager is …"),
    instead of the next one, which it would lend its "it" to. Without it, the passage is one run of
    sentences and every short sentence joins the next."""
    if not follow_paragraphs:
        return _joined(split_sentences(text), join_back=False)
    return [strip for paragraph in split_paragraphs(text) for strip in _joined(split_sentences(paragraph))]


def _joined(sentences: Sequence[str], join_back: bool = True) -> list[str]:
    """Strips of a run of sentences. A short sentence joins the next one; with ``join_back`` it joins
    the strip before it instead, unless that strip already took one (strips stay a few sentences long
    where every sentence is short, as in Chinese) or the sentence ends with a colon (it introduces
    what follows). A short sentence with no strip before it joins the next one, as a lead-in."""
    strips: list[str] = []
    took_one: list[bool] = []
    pending = ""
    for number, sentence in enumerate(sentences, start=1):
        short = len(sentence) < STRIP_MIN_CHARS
        if (
            join_back
            and short
            and not pending
            and strips
            and not took_one[-1]
            and not sentence.endswith((":", "："))
        ):
            strips[-1] = f"{strips[-1]} {sentence}"
            took_one[-1] = True
            continue
        pending = f"{pending} {sentence}" if pending else sentence
        if len(pending) < STRIP_MIN_CHARS and number < len(sentences):
            continue
        strips.append(pending)
        took_one.append(False)
        pending = ""
    return strips


def _normalise_by_max(values: np.ndarray) -> np.ndarray:
    top = float(values.max()) if values.size else 0.0
    return values / top if top > 0 else np.zeros_like(values)


def _normalise_min_max(values: np.ndarray) -> np.ndarray:
    if not values.size:
        return values
    low, high = float(values.min()), float(values.max())
    return (values - low) / (high - low) if high - low > 1e-6 else np.ones_like(values)


@dataclass
class StripScores:
    lexical: np.ndarray  # BM25 / best BM25 over the strips, in [0, 1]
    cosine: np.ndarray  # e5 cosine similarity to the closest query

    @property
    def mixed(self) -> np.ndarray:
        """One number per strip to order them by: BM25 share and min-max-normalised cosine, mixed."""
        return BM25_WEIGHT * self.lexical + (1 - BM25_WEIGHT) * _normalise_min_max(self.cosine)

    @property
    def relevant(self) -> np.ndarray:
        if not self.cosine.size:
            return np.zeros(0, dtype=bool)
        lexical = (self.lexical >= LEXICAL_KEEP) & (self.lexical > 0)
        return lexical | (self.cosine >= float(self.cosine.max()) - DENSE_MARGIN)


def score_strips(
    strips: Sequence[Strip],
    queries: Sequence[str],
    embedder: Embedder,
    embed_passages: Callable[[Sequence[str]], np.ndarray] | None = None,
) -> StripScores:
    """BM25 share and e5 cosine of every strip, each the best over ``queries``.

    ``embed_passages`` defaults to ``embedder.embed_passages`` (pass a cached variant to reuse vectors)."""
    if not strips:
        return StripScores(np.zeros(0), np.zeros(0))
    corpus = [tokenize(s.scoring_text) for s in strips]
    lexical = np.zeros(len(strips))
    if any(corpus):
        bm25 = BM25Okapi([tokens or ["\u2205"] for tokens in corpus])
        for query in queries:
            terms = tokenize(query)
            if terms:
                lexical = np.maximum(lexical, np.asarray(bm25.get_scores(terms), dtype=float))
    strip_vectors = (embed_passages or embedder.embed_passages)([s.scoring_text for s in strips])
    query_vectors = embedder.embed_queries(list(queries))
    cosine = (strip_vectors @ query_vectors.T).max(axis=1).astype(float)
    return StripScores(_normalise_by_max(np.clip(lexical, 0, None)), cosine)


def select_strips(
    scores: StripScores, strips: Sequence[Strip], budget_tokens: int, count_tokens: Callable[[str], int]
) -> list[int]:
    """Indices of the relevant strips, best first until the token budget, returned in document order.
    The best strip is always kept (refinement never empties a retrieval CRAG judged worth using)."""
    if not len(strips):
        return []
    relevant = scores.relevant
    kept: list[int] = []
    used = 0
    for i in np.argsort(-scores.mixed, kind="stable"):
        if kept and not relevant[i]:
            continue
        cost = count_tokens(strips[i].text)
        if used + cost > budget_tokens and kept:
            continue
        kept.append(int(i))
        used += cost
    return in_document_order(strips, kept)


def in_document_order(strips: Sequence[Strip], indices: Sequence[int]) -> list[int]:
    """Strip indices sorted by passage, then by position within it."""
    return sorted(indices, key=lambda i: (strips[i].passage, strips[i].position))


def narrow(scores: StripScores, strips: Sequence[Strip], kept: Sequence[int], count: int) -> list[int]:
    """The ``count`` best of the kept strips, back in document order: the context of a retry after the
    generator said NOT_FOUND. On the handbook, "How many of the 25 days of annual leave can be carried
    over?" got NOT_FOUND with the annual-leave paragraph's three sentences and its answer with two of
    them: the same-topic sentence between hid the stated answer from the 1.5B reader."""
    return in_document_order(strips, sorted(kept, key=lambda i: -float(scores.mixed[i]))[:count])


def relevance_order(strips: Sequence[Strip], kept: Sequence[int], scores: StripScores) -> list[int]:
    """The indices of the passages holding a kept strip, the passage with the best strip first (ties keep
    the passages' own order). A 1.5B reader answers from passage [1] far more often than from [2]: with
    the handbook's annual-leave chunk first (document order) it answered the sick-leave question with
    the annual-leave sentence, though the sick-leave chunk scored 0.86 and the other 0.02."""
    best: dict[int, float] = {}
    for i in kept:
        passage = strips[i].passage
        best[passage] = max(best.get(passage, float("-inf")), float(scores.mixed[i]))
    return sorted(best, key=lambda passage: (-best[passage], passage))


def recompose(
    passages: Sequence[Hit],
    strips: Sequence[Strip],
    kept: Sequence[int],
    passage_order: Sequence[int] | None = None,
) -> list[ContextPassage]:
    """Numbered context passages: each passage's kept strips in order, '…' marking a gap; the passages
    in ``passage_order`` (indices into ``passages``), by default their own order."""
    by_passage: dict[int, list[Strip]] = {}
    for i in kept:
        by_passage.setdefault(strips[i].passage, []).append(strips[i])
    context: list[ContextPassage] = []
    for index in passage_order if passage_order is not None else sorted(by_passage):
        text = ""
        last = -1
        for strip in by_passage[index]:
            joiner = "" if not text else (" " if strip.position == last + 1 else " … ")
            text += joiner + strip.text
            last = strip.position
        context.append(passage_from_hit(len(context) + 1, passages[index], text))
    return context


def refinement_queries(state: RagState) -> list[str]:
    """The question (without what it asks for something other than), plus IRCoT's reasoning sentences
    (they name the bridge entities) and a retry's translations of the question (BM25 reads the strips of
    a passage in the other language only through them)."""
    queries = [facts_of(state).search_text]
    queries += [r for r in state.get("reasoning") or [] if r.strip()]
    queries += question_translations(state)
    spellings = state.get("passage_spellings") or {}
    if spellings:  # the question with its names as the passages write them (graph.names_across_scripts)
        queries.append(with_passage_spellings(state["standalone_question"], spellings))
    return queries


@records_step
def refine_passages(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    passages = hits_from_state(state.get("passages") or [])
    strips = decompose(passages, follow_paragraphs=resources.options.graph.strips_follow_paragraphs)
    embedder = resources.embedder
    scores = score_strips(strips, refinement_queries(state), embedder, resources.embed_passages)
    kept = select_strips(scores, strips, resources.options.max_context_tokens, embedder.count_tokens)
    # usefulness_retry sets narrow_context only when graph.narrow_after_not_found is set
    narrow_to = (
        resources.options.graph.narrow_after_not_found
        if state.get("narrow_context") and state.get("route") != "iterative"
        else None
    )
    if narrow_to is not None:
        kept = narrow(scores, strips, kept, narrow_to)
    order = (
        relevance_order(strips, kept, scores)
        if resources.options.graph.context_order == "relevance"
        else None
    )
    context = recompose(passages, strips, kept, order)
    kept_passages = {strips[k].passage for k in kept}
    kept_strips: list[dict[str, Any]] = [
        {
            "chunk_id": passages[strips[i].passage].chunk_id,
            "text": strips[i].text,
            "bm25_share": round(float(scores.lexical[i]), 3),
            "cosine": round(float(scores.cosine[i]), 3),
        }
        for i in kept
    ]
    return {
        "strips": kept_strips,
        "context": context,
        "decision": {
            "passages": len(passages),
            "strips": len(strips),
            "strips_kept": len(kept),
            "narrowed_to": narrow_to,
            "passages_kept": len(context),
            "dropped_passages": [p.chunk_id for i, p in enumerate(passages) if i not in kept_passages],
            "kept": [{**s, "text": s["text"][:120]} for s in kept_strips],
        },
    }
