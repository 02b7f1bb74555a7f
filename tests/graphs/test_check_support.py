"""The short-answer check of ``check_support``: the judge's short answer must be stated by some passage
of the context, text or title, accents aside. Cases written from other domains than the benchmarks,
with those where it must not fire."""

from __future__ import annotations

import pytest

from core.answer import SupportVerdict
from graphs.rag.nodes.check_support import answer_stated_in_passages
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedLocalModel, ScriptedReranker
from tests.graphs.scripts import cite, nodes_run, run_turn, step, support

PASSAGES = [
    {"n": 1, "text": "The Millau Viaduct spans the valley of the Tarn near Millau in southern France. "
     "It opened to traffic on 16 December 2004 and its tallest mast rises 343 metres."},
    {"n": 2, "text": "Gustave Eiffel's firm built the Garabit Viaduct, finished in 1884."},
    {"n": 3, "text": "兰州中山桥建成于1909年，是黄河上第一座永久性桥梁。"},
    {"n": 4, "title": "Škoda Auto", "text": "The carmaker is based in Mladá Boleslav, near Prague."},
]  # fmt: skip


def state() -> dict:
    return {"standalone_question": "When did the Millau Viaduct open?", "context": PASSAGES}


def citing(*numbers: int) -> list[SupportVerdict]:
    return [SupportVerdict(sentence="…", citations=list(numbers), verdict="fully")]


@pytest.mark.parametrize(
    ("short_answer", "cited", "stated"),
    [
        # must not fire: a passage states the answer
        ("16 December 2004", (1,), True),
        ("343 metres", (1,), True),
        ("the Tarn", (1,), True),
        ("1909年", (3,), True),
        ("黄河", (3,), True),
        ("yes", (2,), True),  # a yes/no answer stands on any passage
        ("Gustave Eiffel's firm", (1, 2), True),  # the bridge of a two-passage answer is in the second
        ("Mlada Boleslav", (4,), True),  # the draft dropped the passage's accents
        ("Skoda Auto", (4,), True),  # stated by the passage's title, which the judge sees too
        (
            "1884",
            (1,),
            True,
        ),  # the draft cites the neighbouring passage: a right answer is not refused for it
        # fires: what the small judge writes when the draft does not answer
        ("two years", (1,), False),  # its prompt's own example
        ("The viaduct opened to traffic in the spring after its inauguration", (1,), False),  # a sentence
        ("1912年", (3,), False),
        ("Gustave Eiffel's bridge in Porto", (2,), False),  # most of its words are in no passage
    ],
)
def test_the_short_answer_must_be_stated_by_a_passage(
    short_answer: str, cited: tuple[int, ...], stated: bool
) -> None:
    assert answer_stated_in_passages(short_answer, citing(*cited), state()) is stated


def test_no_short_answer_or_no_kept_sentence_leaves_nothing_to_check() -> None:
    assert answer_stated_in_passages("", citing(1), state()) is None
    rejected = [SupportVerdict(sentence="…", citations=[1], verdict="not")]
    assert answer_stated_in_passages("two years", rejected, state()) is None  # the support check refuses it


# The confirmation (``graph.confirm_answer``): the local model's P(yes) per sentence, against the cut-off.
QUESTION = "How many days of annual leave do Northwind employees get?"


def confirmed_turn(make_graph, monkeypatch, p_yes: float, local: bool = True, **graph: object):
    monkeypatch.setattr(
        Resources, "llm_is_local", local
    )  # make_graph's Resources: the script as local or not
    llm = ScriptedLocalModel(
        p_yes={"answer_sentence_supported": p_yes},
        replies={
            "generate_answer": cite("Employees get 25 days of paid annual leave per year.", "25 days"),
            "check_support": support("fully", short="25 days"),
            "answer_sentence_supported": "yes" if p_yes >= 0.5 else "no",
            "rewrite_query": "annual leave days",
        },
    )
    graph_, _ = make_graph(llm, reranker=ScriptedReranker({"handbook::c0": 0.9}, default=0.2), graph=graph)
    return run_turn(graph_, QUESTION, route="single"), llm


def test_a_draft_the_model_confirms_is_answered(make_graph, monkeypatch) -> None:
    state, llm = confirmed_turn(make_graph, monkeypatch, p_yes=0.9, confirm_answer=True)
    assert not state["refused"] and "25 days" in state["answer"]
    confirmation = step(state, "check_support")["confirmation"]
    assert confirmation["confirmed"] is True and confirmation["p_yes"] == [0.9]


def test_a_draft_the_model_doubts_is_looked_up_again_then_refused(make_graph, monkeypatch) -> None:
    state, llm = confirmed_turn(make_graph, monkeypatch, p_yes=0.3, confirm_answer=True)
    assert state["refused"]
    assert nodes_run(state).count("check_support") == 2 and "usefulness_retry" in nodes_run(state)
    assert [f["check"] for f in step(state, "check_support")["failed_checks"]] == ["unconfirmed_answer"]


def test_the_cut_off_is_a_setting(make_graph, monkeypatch) -> None:
    state, _ = confirmed_turn(
        make_graph, monkeypatch, p_yes=0.3, confirm_answer=True, confirm_answer_cutoff=0.25
    )
    assert not state["refused"]


def test_off_by_default_nothing_is_asked(make_graph, monkeypatch) -> None:
    state, llm = confirmed_turn(make_graph, monkeypatch, p_yes=0.01)
    assert not state["refused"] and "answer_sentence_supported" not in llm.prompts_called()
    assert "confirmation" not in step(state, "check_support")


def test_a_hosted_model_is_not_asked(make_graph, monkeypatch) -> None:
    # the cut-off is the local model's P(yes); a hosted model's would need its own
    state, llm = confirmed_turn(make_graph, monkeypatch, p_yes=0.01, local=False, confirm_answer=True)
    assert not state["refused"] and "answer_sentence_supported" not in llm.prompts_called()
    assert step(state, "check_support")["confirmation"]["skipped"] == "not calibrated for a hosted model"
