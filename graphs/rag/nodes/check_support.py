"""Self-RAG's IsSup and IsUse in ONE structured LLM call, which also proposes the short answer.

Each answer sentence is judged against the passages the answer cites (fully / partially / not
supported), and the answer as a whole is judged on whether it answers the question. The reply's schema
is built per call with exactly one required verdict per sentence (``sentence_1`` ... ``sentence_N``), so
the judge cannot skip one: llama.cpp's grammar and OpenAI's strict JSON schema both enforce it. A
malformed judgement (``StructuredOutputError``) leaves every sentence 'unchecked' — never 'supported'. A sentence
that cites no passage is 'not' supported whatever the judge says: IsSup checks a sentence against the
passages it cites, and an uncited claim has none (the small local judge would otherwise wave a fluent
hallucination through); so is a sentence stating a number its cited passages and the question never
state. The question's constraints (a year, an ordinal) must be stated near the short answer in a cited
passage (``_constraints``). An answer naming only what the question asks for something other than
("besides X", or the last answer after "what else?") is caught too (``_exclusions``). With
``graph.confirm_answer`` the local model is also asked, per
sentence, whether it is stated and answers the question, and P(yes) is read from one token
(``answer_confirmation``). What each failure
leads to is the answer-check registry's business (``graphs/rag/answer_checks.py``): this node records
the ``failed_checks``; ``graph.checks_off`` switches any check off to measure it. With
``graph.support_verifier='features'`` the judge is not asked at all: a model fitted on the draft's no-call
features decides (``verify_by_features``), and a draft that may be shown gets its short answer from one
short call that reads the question and the answer only, no passages (``short_answer_of``).
"""

from __future__ import annotations

import functools
from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, create_model

from core.answer import SupportVerdict
from core.settings import GraphSettings
from core.vocabulary import AnswerCheckName, JudgedSupport
from graphs.rag.answer_checks import failed_checks, next_step
from graphs.rag.nodes._citations import AnswerSentence, answer_sentences, states_sentence
from graphs.rag.nodes._constraints import unmet_constraints, unstated_numbers
from graphs.rag.nodes._exclusions import repeated_exclusions
from graphs.rag.nodes._llm import ask_structured, probability_yes
from graphs.rag.nodes._passages import format_passages, neutralise_delimiters
from graphs.rag.nodes._question_facts import facts_of
from graphs.rag.nodes._short_answer import clean_short_answer
from graphs.rag.nodes._step import records_step
from graphs.rag.nodes.draft_verifier import draft_features, draft_verdict, passage_bodies
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt
from tools.knowledge_base.sparse import tokenize


@functools.lru_cache(maxsize=64)
def judgement_schema(sentence_count: int) -> type[BaseModel]:
    """The reply of one check: a required verdict for each of ``sentence_count`` sentences, in order
    (built once per count: every answer of that length is checked against the same model class)."""
    verdicts: dict[str, Any] = {
        f"sentence_{i}": (JudgedSupport, Field(description=f"support of answer sentence {i}"))
        for i in range(1, sentence_count + 1)
    }
    verdicts["answers_question"] = (bool, Field(description="the answer addresses the question asked"))
    # No maxLength: OpenAI's strict schemas reject it; finalize_answer drops an over-long one.
    verdicts["short_answer"] = (
        str,
        Field(description="the few words of the answer that answer the question; empty if none"),
    )
    return create_model(f"SupportJudgement{sentence_count}", **verdicts)


def judgement_prompt(state: RagState) -> tuple[str, str, list[SupportVerdict]]:
    """(system, user, sentences still unjudged) for the check of ``answer_draft``."""
    sentences = answer_sentences(state.get("answer_draft") or "")
    context = state.get("context") or []
    cited = {n for s in sentences for n in s.citations}
    passages = [p for p in context if p["n"] in cited] or list(context)
    numbered = "\n".join(f"{i}. {neutralise_delimiters(s.text)}" for i, s in enumerate(sentences, start=1))
    user = (
        f"{format_passages(passages)}\n\nQuestion: {state['standalone_question']}\n\n"
        f"Answer sentences:\n<sentences>\n{numbered}\n</sentences>"
    )
    return load_prompt("check_support"), user, unjudged(sentences)


def unjudged(sentences: list[AnswerSentence]) -> list[SupportVerdict]:
    """One 'unchecked' verdict per answer sentence, for a check to fill in."""
    return [SupportVerdict(sentence=s.text, citations=s.citations, verdict="unchecked") for s in sentences]


def shown(verdicts: list[SupportVerdict]) -> list[dict[str, Any]]:
    """The verdicts as the step's decision records them for the trace."""
    return [{"sentence": v.sentence[:160], "citations": v.citations, "verdict": v.verdict} for v in verdicts]


def mark_uncited_unsupported(verdicts: list[SupportVerdict]) -> None:
    for verdict in verdicts:
        if not verdict.citations:
            verdict.verdict = "not"


def mark_unstated_numbers_unsupported(
    verdicts: list[SupportVerdict], state: RagState
) -> dict[str, list[str]]:
    """A sentence with a number that its passages and the question never state is 'not' supported
    whatever the judge said (the small judge waves invented figures through). Returns what was found."""
    texts = {p["n"]: p["text"] for p in state.get("context") or []}
    found: dict[str, list[str]] = {}
    for verdict in verdicts:
        cited = [texts[n] for n in verdict.citations if n in texts]
        numbers = unstated_numbers(verdict.sentence, cited, state["standalone_question"])
        if numbers and cited:
            verdict.verdict = "not"
            found[verdict.sentence[:160]] = numbers
    return found


def constraint_check(state: RagState, short_answer: str, verdicts: list[SupportVerdict]) -> dict[str, Any]:
    """The question's constraints (year, ordinal) against the passages stating the short answer."""
    constraints = facts_of(state).constraints
    cited = {n for v in verdicts for n in v.citations}
    passages = [p["text"] for p in state.get("context") or [] if p["n"] in cited]
    return {"constraints": constraints, "unmet": unmet_constraints(short_answer, constraints, passages)}


def acted_on(unmet: list[str], graph: GraphSettings) -> list[str]:
    """The unmet constraints the turn acts on (and a refusal names): none while the check only records."""
    return unmet if graph.refuse_unmet_constraints else []


def question_checks(
    state: RagState, short_answer: str, verdicts: list[SupportVerdict], checks_off: set[AnswerCheckName]
) -> dict[str, Any]:
    """The short answer against what the question asks: its constraints (stated near it in a cited
    passage) and what it excludes (not named again). A check in ``checks_off`` finds nothing."""
    constraints = constraint_check(state, short_answer, verdicts)
    excluded = facts_of(state).excluded
    repeated = repeated_exclusions(short_answer, state.get("answer_draft") or "", excluded)
    return {
        "constraints": constraints,
        "excluded": excluded,
        "unmet": [] if "constraints" in checks_off else constraints["unmet"],
        "repeated": [] if "exclusions" in checks_off else repeated,
    }


class ShortAnswer(BaseModel):
    short_answer: str = Field(
        description="the few words of the answer that answer the question; empty if none"
    )


def short_answer_of(
    state: RagState, verdicts: list[SupportVerdict], config: RunnableConfig, resources: Resources
) -> tuple[str, str | None]:
    """(short answer, error) copied by the model out of the sentences still standing. It reads no
    passage: copying a span is cheap work for a small model, and ``finalize_answer`` keeps the short
    answer only when the kept sentences and their passages state it."""
    standing = [v.sentence for v in verdicts if v.verdict != "not"]
    if not standing:
        return "", None
    answer = neutralise_delimiters(" ".join(standing))
    user = f"Question: {state['standalone_question']}\n\n<answer>\n{answer}\n</answer>"
    reply, error = ask_structured(resources.llm, ShortAnswer, load_prompt("short_answer"), user, config)
    return ("", error) if reply is None else (clean_short_answer(reply.short_answer), None)


def confirmation_prompt(question: str, sentence: str, cited: list[Any]) -> tuple[str, str]:
    """(system, user) of the yes/no question for one answer sentence: stated by the passages it cites
    (id and text, the form its cut-off was calibrated on), and an answer to the question?"""
    user = (
        f"{format_passages(cited)}\n\nQuestion: {question}\nAnswer sentence: {neutralise_delimiters(sentence)}\n\n"
        "Is the sentence stated by the passages and an answer to the question? Reply yes or no."
    )
    return load_prompt("answer_sentence_supported"), user


def answer_confirmation(
    state: RagState, verdicts: list[SupportVerdict], config: RunnableConfig, resources: Resources
) -> dict[str, Any]:
    """The local model's P(yes) for each sentence citing a passage, one call each; the draft is confirmed
    when its best sentence reaches ``graph.confirm_answer_cutoff``, and unjudged (``confirmed`` None)
    when the model reports no first-token probabilities.

    The JSON judge keeps most wrong drafts (21 of 31 on held-out report questions, a third of them
    answers to unanswerable questions); this question, asked per sentence with the question beside it,
    refused 17 of those 31 for 3 of 18 right ones (bench.verifier_set, cut-off calibrated on the
    calibration split). Hosted models skip it: the cut-off is the local model's."""
    graph = resources.options.graph
    if not resources.llm_is_local:
        return {"confirmed": None, "skipped": "not calibrated for a hosted model"}
    texts = {p["n"]: p["text"] for p in state.get("context") or []}
    scores: list[float | None] = []
    for verdict in verdicts:
        cited: list[Any] = [{"n": n, "text": texts[n]} for n in verdict.citations if n in texts]
        if not cited:
            scores.append(None)
            continue
        system, user = confirmation_prompt(state["standalone_question"], verdict.sentence, cited)
        scores.append(probability_yes(resources.llm, system, user, config))
    known = [p for p in scores if p is not None]
    best = max(known) if known else None
    return {
        "p_yes": [None if p is None else round(p, 3) for p in scores],
        "cutoff": graph.confirm_answer_cutoff,
        "confirmed": None if best is None else best >= graph.confirm_answer_cutoff,
    }


def mark_stated(verdicts: list[SupportVerdict], state: RagState) -> None:
    """An unjudged sentence whose cited passages (titles included) hold its numbers and most of its words
    is 'stated': what code can say without a judge, so a reader is not told every sentence is unchecked."""
    bodies = passage_bodies(state.get("context") or [])
    for verdict in verdicts:
        cited = "\n".join(bodies[n] for n in verdict.citations if n in bodies)
        if verdict.verdict == "unchecked" and cited and states_sentence(verdict.sentence, cited, tokenize):
            verdict.verdict = "stated"


def verify_by_features(state: RagState, config: RunnableConfig, resources: Resources) -> dict[str, Any]:
    """``graph.support_verifier='features'``: the judge is not asked. Each cited sentence is 'stated'
    when its passages hold its numbers and most of its words and 'unchecked' otherwise (an uncited one,
    or one stating a number its passages never state, is 'not' supported),
    and the fitted verifier's P(right) decides whether the draft may be shown (the ``unlikely_draft``
    check). A draft that may be shown gets its short answer (one short call), and the question's
    constraints and exclusions are then checked against it as after the judge."""
    verdicts = unjudged(answer_sentences(state.get("answer_draft") or ""))
    graph = resources.options.graph
    checks_off = set(graph.checks_off)
    if "uncited" not in checks_off:
        mark_uncited_unsupported(verdicts)
    unstated = {} if "unstated_numbers" in checks_off else mark_unstated_numbers_unsupported(verdicts, state)
    mark_stated(verdicts, state)
    found = draft_features(state, tokenize, graph.share_across_languages)
    verdict = draft_verdict(found)
    findings: dict[str, Any] = {
        "unmet_constraints": [],
        "repeated_exclusions": [],
        "verdicts": [v.verdict for v in verdicts],
        "answers_question": None,
        "draft_likely": verdict["kept"],
        "checks_off": checks_off,
    }
    failures = failed_checks(**findings)
    short_answer, error = "", None
    constraints: dict[str, Any] = {}
    if next_step(state, failures, graph) is None and any(v.verdict != "not" for v in verdicts):
        short_answer, error = short_answer_of(state, verdicts, config, resources)
        asked = question_checks(state, short_answer, verdicts, checks_off)
        constraints = asked["constraints"]
        findings["unmet_constraints"], findings["repeated_exclusions"] = asked["unmet"], asked["repeated"]
        failures = failed_checks(**findings)
    return {
        "support": [v.model_dump() for v in verdicts],
        "answers_question": None,
        "proposed_short_answer": short_answer,
        "unmet_constraints": acted_on(findings["unmet_constraints"], graph),
        "repeated_exclusions": findings["repeated_exclusions"],
        "failed_checks": failures,
        "decision": {
            "verifier": "features",
            "verdicts": shown(verdicts),
            "features": found,
            **verdict,
            "short_answer": short_answer,
            **({"short_answer_error": error} if error else {}),
            "unstated_numbers": unstated,
            **({"constraints": constraints} if constraints else {}),
            "failed_checks": failures,
            "usefulness_retries": {
                "counter": state.get("usefulness_retries", 0),
                "bound": graph.max_usefulness_retries,
            },
        },
    }


@records_step
def check_support(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    if resources.support_verifier == "features":
        return verify_by_features(state, config, resources)
    system, user, verdicts = judgement_prompt(state)
    judgement, error = ask_structured(resources.llm, judgement_schema(len(verdicts)), system, user, config)
    graph = resources.options.graph
    counters = {
        "support_retries": {"counter": state.get("support_retries", 0), "bound": graph.max_support_retries},
        "usefulness_retries": {
            "counter": state.get("usefulness_retries", 0),
            "bound": graph.max_usefulness_retries,
        },
    }
    checks_off = set(graph.checks_off)
    if judgement is None:
        if "uncited" not in checks_off:
            mark_uncited_unsupported(verdicts)
        failures = failed_checks(
            # what an earlier check of this turn found still stands: this one judged nothing
            unmet_constraints=state.get("unmet_constraints") or [],
            repeated_exclusions=state.get("repeated_exclusions") or [],
            verdicts=[v.verdict for v in verdicts],
            answers_question=None,
            checks_off=checks_off,
        )
        return {
            "support": [v.model_dump() for v in verdicts],
            "answers_question": None,
            "proposed_short_answer": "",
            "failed_checks": failures,
            "decision": {
                "error": error,
                "fallback": "sentences left unchecked",
                "verdicts": shown(verdicts),
                "failed_checks": failures,
                **counters,
            },
        }
    given = judgement.model_dump()
    for i, verdict in enumerate(verdicts, start=1):
        verdict.verdict = given[f"sentence_{i}"]
    answers_question = bool(given["answers_question"])
    short_answer = clean_short_answer(given["short_answer"]) if answers_question else ""
    if "uncited" not in checks_off:
        mark_uncited_unsupported(verdicts)
    unstated = {} if "unstated_numbers" in checks_off else mark_unstated_numbers_unsupported(verdicts, state)
    asked = question_checks(state, short_answer, verdicts, checks_off)
    constraints, excluded = asked["constraints"], asked["excluded"]
    unmet, repeated = asked["unmet"], asked["repeated"]
    findings: dict[str, Any] = {
        "unmet_constraints": unmet,
        "repeated_exclusions": repeated,
        "verdicts": [v.verdict for v in verdicts],
        "answers_question": answers_question,
        "checks_off": checks_off,
    }
    failures = failed_checks(**findings)
    confirmation: dict[str, Any] = {}
    if (
        graph.confirm_answer
        and "unconfirmed_answer" not in checks_off
        and any(v.verdict != "not" for v in verdicts)
        and next_step(state, failures, graph) is None  # only a draft that would be shown: its calls are dear
    ):
        confirmation = answer_confirmation(state, verdicts, config, resources)
        failures = failed_checks(**findings, answer_confirmed=confirmation.get("confirmed"))
    return {
        "support": [v.model_dump() for v in verdicts],
        "answers_question": answers_question,
        "proposed_short_answer": short_answer,
        "unmet_constraints": acted_on(unmet, graph),
        "repeated_exclusions": repeated,
        "failed_checks": failures,
        "decision": {
            "verifier": "judge",
            "verdicts": shown(verdicts),
            "answers_question": answers_question,
            "short_answer": short_answer,
            **({"confirmation": confirmation} if confirmation else {}),
            "unstated_numbers": unstated,
            "constraints": constraints,
            "excluded": {"items": excluded, "repeated": repeated},
            "failed_checks": failures,
            **({"checks_off": sorted(checks_off)} if checks_off else {}),
            **counters,
        },
    }
