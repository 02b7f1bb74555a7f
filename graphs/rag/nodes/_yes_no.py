"""A yes/no question's answer read from the passages as one token (``graph.yes_no_verdict``).

The 1.5B reader answers "yes" or NOT_FOUND to nearly every yes/no question: told nothing, it does not
write "no" (bench/data/yes_no_questions.jsonl, session 37). Asked for one word about one thing, with only
the paragraph about that thing in front of it, its P(yes) separates the two; asked about "both A and B"
beside every paragraph, it does not. So the question is split into its parts, each part is read against
its own paragraph, and the reader is told the verdict and writes the sentence that shows it; the checks
after it judge that cited answer as usual.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field
from rank_bm25 import BM25Okapi

from graphs.rag.nodes._llm import ask_structured, ask_text, probability_yes
from graphs.rag.nodes._passages import format_passages
from graphs.rag.nodes._question_facts import facts_of
from graphs.rag.resources import Resources
from graphs.rag.state import ContextPassage, RagState
from prompts import load_prompt
from tools.knowledge_base.sparse import tokenize
from tools.knowledge_base.text_units import split_paragraphs

MAX_CLAIMS = 4
# An unsplit question may compare two things ("Were A and B born in the same town?"): it is read against
# the paragraphs scoring at least this share of the best one, at most two of them.
SECOND_PARAGRAPH_SHARE = 0.5


class YesNoClaims(BaseModel):
    questions: list[str] = Field(description="one yes/no question per thing the question asks about")


def claims_of(question: str, resources: Resources, config: RunnableConfig) -> list[str]:
    """The yes/no questions ``question`` is made of ("Are both A and B open?" → "Is A open?", "Is B
    open?"), with ``graph.yes_no_claims``; ``[question]`` otherwise, or when the reply is unusable."""
    if not resources.options.graph.yes_no_claims:
        return [question]
    reply, _ = ask_structured(
        resources.llm, YesNoClaims, load_prompt("yes_no_claims"), f"Question: {question}", config
    )
    claims = [q.strip() for q in (reply.questions if reply else []) if q.strip()][:MAX_CLAIMS]
    return claims or [question]


def passages_for(
    claim: str, context: list[ContextPassage], one: bool, unrefined: dict[str, str] | None = None
) -> list[ContextPassage]:
    """What a claim is read against: the paragraph BM25 scores best for it (``one``: a claim about one
    thing), and with it the second best when that scores close (a question comparing two things).
    Paragraphs are read from the passages as retrieved (``unrefined``, by chunk id), as refinement keeps
    single sentences and drops the one that says "It has no projector" after naming the room. Beside
    other paragraphs the 1.5B model answers "yes" to a claim that one of them makes about another thing
    ("Does room B have a projector?" beside "Room A has a projector"); a small document's passage
    describes several things."""
    unrefined = unrefined or {}
    units = [
        (p, paragraph)
        for p in context
        for paragraph in split_paragraphs(unrefined.get(p["chunk_id"]) or p["text"])
    ]
    if len(units) <= 1:
        return list(context)
    scores = BM25Okapi([tokenize(text) or ["\x00"] for _, text in units]).get_scores(tokenize(claim))
    order = sorted(range(len(units)), key=lambda i: scores[i], reverse=True)
    chosen = [order[0]]
    second = order[1]
    if not one and scores[second] > 0 and scores[second] >= SECOND_PARAGRAPH_SHARE * scores[order[0]]:
        chosen.append(second)
    by_passage: dict[int, list[str]] = {}
    for i in sorted(chosen):
        by_passage.setdefault(units[i][0]["n"], []).append(units[i][1].strip())
    return [
        ContextPassage(**{**p, "text": "\n\n".join(by_passage[p["n"]])})  # type: ignore[typeddict-item]
        for p in context
        if p["n"] in by_passage
    ]


class Verdict(BaseModel):
    answer: Literal["yes", "no", ""] = ""  # "": not decided
    p_yes: float | None = None
    failed_part: str = ""  # of a question split into parts: the one the passages answer "no" to
    found: list[str] = Field(default_factory=list)  # of a comparison: each thing's value, as looked up

    def decision(self) -> dict[str, object]:
        """The verdict as the step's trace records it; empty when undecided."""
        if not self.answer:
            return {}
        return {
            "yes_no_verdict": self.answer,
            "p_yes": self.p_yes,
            "failed_part": self.failed_part,
            **({"found": self.found} if self.found else {}),
        }


def lookups_of(question: str, resources: Resources, config: RunnableConfig) -> list[str]:
    """With ``graph.yes_no_lookups``, for a question comparing two things ("Were A and B born in the same
    town?"), one question per thing asking for the compared value ("Where was A born?"); else []."""
    if not resources.options.graph.yes_no_lookups:
        return []
    reply, _ = ask_structured(
        resources.llm, YesNoClaims, load_prompt("yes_no_lookups"), f"Question: {question}", config
    )
    found = [q.strip() for q in (reply.questions if reply else []) if q.strip()]
    return found if len(found) == 2 else []


def compared_verdict(
    question: str,
    lookups: list[str],
    context: list[ContextPassage],
    unrefined: dict[str, str],
    resources: Resources,
    config: RunnableConfig,
) -> Verdict:
    """A comparison decided from the two values looked up, each in its own paragraph: the 1.5B model
    compares "Swedish" with "Swedish", or 2009 with 2014, where read from two paragraphs at once it is
    near chance. Undecided when a value is not found or no probability is reported."""
    found = []
    for lookup in lookups:
        passage = format_passages(passages_for(lookup, context, one=True, unrefined=unrefined))
        value = ask_text(
            resources.llm, load_prompt("lookup_value"), f"{passage}\n\nQuestion: {lookup}", config
        )
        if not value.strip() or "NOT_FOUND" in value.upper():
            return Verdict()
        found.append(f"{lookup} {value.strip()}")
    user = "Found:\n" + "\n".join(f"- {f}" for f in found) + f"\n\nQuestion: {question}"
    p_yes = probability_yes(resources.llm, load_prompt("yes_no_from_values"), user, config)
    if p_yes is None:
        return Verdict()
    return decided(p_yes, resources, found=found)


def verdict_for(state: RagState, resources: Resources, config: RunnableConfig) -> Verdict:
    """The verdict the reader is told, for a yes/no question with ``graph.yes_no_verdict`` and the
    bundled model (the threshold and the split are calibrated on its yes-bias; a hosted model answers
    itself); undecided otherwise."""
    if not (
        resources.options.graph.yes_no_verdict and resources.llm_is_local and facts_of(state).asks_yes_no
    ):
        return Verdict()
    return read_verdict(state, state["standalone_question"], resources, config)


def read_verdict(state: RagState, question: str, resources: Resources, config: RunnableConfig) -> Verdict:
    """The verdict on ``question`` over the state's context: the least P(yes) of the question's parts
    (a conjunction holds only when each part does); undecided when the model reports no first-token
    probabilities or there is no context."""
    context = state.get("context") or []
    if not context:
        return Verdict()
    claims = claims_of(question, resources, config)
    unrefined = {h["chunk_id"]: h["text"] for h in state.get("passages") or []}
    if len(claims) == 1 and (lookups := lookups_of(question, resources, config)):
        compared = compared_verdict(question, lookups, context, unrefined, resources, config)
        if compared.answer:
            return compared
    scores = []
    for claim in claims:
        passages = format_passages(passages_for(claim, context, one=len(claims) > 1, unrefined=unrefined))
        user = f"{passages}\n\nQuestion: {claim}"
        scores.append(probability_yes(resources.llm, load_prompt("yes_no_verdict"), user, config))
    known = [p for p in scores if p is not None]
    if len(known) < len(scores):
        return Verdict()
    verdict = decided(min(known), resources)
    if verdict.answer == "no" and len(claims) > 1:
        verdict.failed_part = claims[known.index(min(known))]
    return verdict


def decided(p_yes: float, resources: Resources, **found: list[str]) -> Verdict:
    """``p_yes`` read against ``graph.yes_no_threshold``."""
    answer = "yes" if p_yes >= resources.options.graph.yes_no_threshold else "no"
    return Verdict(answer=answer, p_yes=round(p_yes, 4), **found)


_OPENINGS = {("yes", "en"): "Yes", ("no", "en"): "No", ("yes", "zh"): "是的", ("no", "zh"): "不是"}


def verdict_instruction(verdict: Verdict | None, language: str) -> str:
    """The lines that tell the reader the verdict, how to open its answer and, for a "no" to a question
    made of parts, which part fails ("No, rooms A and B both have a projector" is what it wrote
    without); '' without a verdict."""
    if verdict is None or not verdict.answer:
        return ""
    opening = _OPENINGS[(verdict.answer, "zh" if language == "zh" else "en")]
    text = load_prompt("yes_no_answer").format(verdict=verdict.answer, opening=opening).strip()
    if verdict.failed_part:
        text += "\n" + load_prompt("yes_no_part").format(claim=verdict.failed_part).strip()
    return text
