"""A second opinion on a rejected draft that a 1.5B model can carry: copy the sentence, code checks it.

Judging entailment is hard for a small model (the support judge rejects about half of the right
drafts it sees); copying is easy. When the judge calls a sentence stating the short answer unsupported,
the model is asked to copy, word for word, the passage sentence that states that answer. Code then
checks the copy: it must be found verbatim in a passage the draft cites (case and spacing aside), be at
most two sentences long (a model that copies a whole passage points at nothing), and state the short
answer (``backed_short_answer``). Only then does the judge's 'not' on the sentences stating that answer
become 'fully'. A yes/no answer cannot be checked this way (no sentence states "yes"), nor an answer
that only repeats the question's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from pydantic import BaseModel, Field

from graphs.rag.nodes._short_answer import answers_another_question, backed_short_answer, is_yes_no
from tools.knowledge_base.text_units import split_sentences

MAX_QUOTE_SENTENCES = 2
_SPACE = re.compile(r"\s+")
_EDGES = " \t\n\"'“”‘’「」『』.。"


class Evidence(BaseModel):
    passage: int = Field(description="the id of the passage holding the sentence; 0 if none does")
    quote: str = Field(description="that sentence, copied word for word; empty if none")


def _plain(text: str) -> str:
    return _SPACE.sub(" ", text).strip(_EDGES).casefold()


def quote_fault(
    evidence: Evidence,
    passages: Mapping[int, str],
    short_answer: str,
    question: str,
    tokenize: Callable[[str], list[str]],
) -> str | None:
    """Why the copy does not back ``short_answer`` (None when it does). ``passages``: those the draft cites."""
    if not short_answer or is_yes_no(short_answer):
        return "no short answer a sentence could state"
    if answers_another_question(short_answer, question, tokenize):
        return "the short answer only repeats the question"
    quote = _plain(evidence.quote)
    if not quote or evidence.passage not in passages:
        return "no sentence of a cited passage was copied"
    if quote not in _plain(passages[evidence.passage]):
        return "the copy is not in the passage word for word"
    if len(split_sentences(evidence.quote)) > MAX_QUOTE_SENTENCES:
        return f"the copy is longer than {MAX_QUOTE_SENTENCES} sentences"
    if not backed_short_answer(short_answer, [evidence.quote], tokenize):
        return "the copied sentence does not state the short answer"
    return None
