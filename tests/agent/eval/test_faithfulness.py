"""Faithfulness as the quality gate measures it: what the answer shows, judged again from outside the
graph by the support judge's prompt against the passages each sentence cites."""

from __future__ import annotations

from types import SimpleNamespace

from agent.eval.faithfulness import ShownSentence, judged_state, measure_faithfulness
from agent.eval.qa import shown_sentences
from core.answer import SupportVerdict
from tests.graphs.helpers import ScriptedChatModel
from tests.graphs.scripts import support

# A library's opening hours, two documents.
TEXTS = {
    "lib-hours": ("Opening hours", "The library opens at 8 am and closes at 10 pm on weekdays."),
    "lib-cards": (
        "Library cards",
        "A library card is free for residents and costs 20 euros a year otherwise.",
    ),
}
QUESTION = "When does the library close on weekdays?"


def test_the_shown_sentences_cite_their_passages_renumbered_from_one() -> None:
    shown = [
        ShownSentence(sentence="It closes at 10 pm.", doc_ids=["lib-hours"]),
        ShownSentence(sentence="Cards are free for residents.", doc_ids=["lib-cards", "unknown"]),
    ]
    state = judged_state(QUESTION, shown, TEXTS)
    assert state["answer_draft"] == "It closes at 10 pm. [1] Cards are free for residents. [2]"
    assert [(p["n"], p["title"]) for p in state["context"]] == [(1, "Opening hours"), (2, "Library cards")]


def test_sentences_the_evaluator_rates_fully_supported_are_counted() -> None:
    llm = ScriptedChatModel(replies={"check_support": support("fully", "not")})
    shown = [
        ShownSentence(sentence="It closes at 10 pm.", doc_ids=["lib-hours"]),
        ShownSentence(sentence="It is open on Sundays.", doc_ids=["lib-hours"]),
    ]
    figures = measure_faithfulness(llm, [(QUESTION, shown), ("Another question?", [])], TEXTS)
    assert (figures.sentences, figures.supported, figures.share) == (2, 1, 0.5)
    assert llm.prompts_called() == ["check_support"]  # an answer showing nothing costs no call


def test_an_uncited_sentence_is_not_supported_whatever_the_evaluator_says() -> None:
    llm = ScriptedChatModel(replies={"check_support": support("fully")})
    figures = measure_faithfulness(
        llm, [(QUESTION, [ShownSentence(sentence="It closes late.", doc_ids=[])])], TEXTS
    )
    assert (figures.sentences, figures.supported) == (1, 0)


def test_a_broken_judgement_counts_its_sentences_as_unsupported() -> None:
    llm = ScriptedChatModel(replies={"check_support": "the sentence looks fine to me"})
    shown = [ShownSentence(sentence="It closes at 10 pm.", doc_ids=["lib-hours"])]
    figures = measure_faithfulness(llm, [(QUESTION, shown)], TEXTS)
    assert (figures.sentences, figures.supported, figures.failed_judgements) == (1, 0, 1)


def test_a_result_records_the_sentences_shown_with_the_documents_they_cite() -> None:
    answer = SimpleNamespace(
        refused=False,
        citations=[SimpleNamespace(n=1, doc_id="lib-hours")],
        support=[
            SupportVerdict(sentence="It closes at 10 pm. [1]", citations=[1], verdict="fully"),
            SupportVerdict(sentence="It has a cafe. [1]", citations=[1], verdict="not", removed=True),
            SupportVerdict(sentence="It opens at 8 am. [1]", citations=[1], verdict="fully", trimmed=True),
        ],
    )
    assert shown_sentences(answer) == [{"sentence": "It closes at 10 pm.", "doc_ids": ["lib-hours"]}]
    assert shown_sentences(SimpleNamespace(**{**vars(answer), "refused": True})) == []
