"""Faithfulness measured from outside the graph and without a model: is every sentence an answer shows
grounded in the passages it cites?

A sentence is *grounded* when its cited passages (titles included) hold every number it states and at
least ``GROUNDED_MIN_SHARE`` of its words (Chinese: character bigrams, either script). A sentence citing
nothing is not grounded. This is a measure of what a source says, not of whether the answer is right:
"Employees get 25 days of annual leave [1]" is grounded in a passage stating it even when the question
asked about sick leave (the outcome measures that).

Why not a judge: the graph's own verdicts grade the graph (and a path that judges no sentence reports
none), and re-asking the same 1.5B judge outside the run disagreed with its in-run verdicts on a fifth
of sentences (docs/benchmarks.md, session 26). Word and number overlap is blunt — a faithful paraphrase
can fall under the share, a sentence that joins two stated facts wrongly can pass — but it is the same
for every path, costs no call, and cannot drift with a model's mood.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field

from graphs.rag.inspection import word_share
from graphs.rag.lexicon import numbers_in
from tools.knowledge_base.sparse import tokenize

# The share of a sentence's words its sources must hold: the graph's attribution share (a 1.5B reader
# copies its sources' wording, so a grounded sentence holds most of its words; a sentence written from
# elsewhere rarely reaches 0.6 against a passage on the same topic). Kept here rather than imported with
# the graph's own test, so that retuning the graph does not move the gate's yardstick with it.
GROUNDED_MIN_SHARE = 0.6


class ShownSentence(BaseModel):
    """One sentence an answer shows (citation markers stripped), with the documents it cites."""

    sentence: str
    doc_ids: list[str]


class Grounding(BaseModel):
    sentences: int
    grounded: int
    ungrounded: list[str] = Field(default_factory=list, description="the sentences that were not, to read")

    @property
    def share(self) -> float:
        return round(self.grounded / self.sentences, 4) if self.sentences else 1.0


def is_grounded(sentence: str, cited: list[str]) -> bool:
    """``cited`` (the cited passages' texts) hold every number of ``sentence`` and enough of its words."""
    if not cited:
        return False
    sources = "\n".join(cited)
    return numbers_in(sentence) <= numbers_in(sources) and (
        word_share(sentence, sources, tokenize) >= GROUNDED_MIN_SHARE
    )


def measure_grounding(
    answers: Iterable[list[ShownSentence]], texts: Mapping[str, tuple[str, str]]
) -> Grounding:
    """Ground every shown sentence of every answer; ``texts`` maps a doc_id to its (title, text)."""
    sentences = grounded = 0
    ungrounded: list[str] = []
    for shown in answers:
        for s in shown:
            cited = [f"{texts[d][0]}\n{texts[d][1]}" for d in s.doc_ids if d in texts]
            sentences += 1
            if is_grounded(s.sentence, cited):
                grounded += 1
            else:
                ungrounded.append(s.sentence[:200])
    return Grounding(sentences=sentences, grounded=grounded, ungrounded=ungrounded)
