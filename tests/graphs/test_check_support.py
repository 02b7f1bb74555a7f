"""The confirmation of ``check_support`` (``graph.confirm_answer``): the local model's P(yes) that each
sentence is stated by its passages and answers the question, against the calibrated cut-off. The real
model's yes/no is the bench's business (``bench.verifier_set``); here a scripted model reports the
probabilities to pin down the wiring."""

from __future__ import annotations

from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedLocalModel, ScriptedReranker
from tests.graphs.scripts import cite, nodes_run, run_turn, step, support

QUESTION = "How many days of annual leave do Northwind employees get?"


def confirmed_turn(make_graph, monkeypatch, p_yes: float, local: bool = True, **graph: object):
    # make_graph's Resources: the script counts as the local model or as a hosted one
    monkeypatch.setattr(Resources, "llm_is_local", local)
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


def test_a_draft_another_check_already_sends_back_is_not_asked(make_graph, monkeypatch) -> None:
    # the year the question names is stated nowhere near the answer: the constraint check acts first,
    # so the confirmation's calls would change nothing
    monkeypatch.setattr(Resources, "llm_is_local", True)
    llm = ScriptedLocalModel(
        p_yes={"answer_sentence_supported": 0.9},
        replies={
            "generate_answer": cite("Employees get 25 days of paid annual leave per year.", "25 days"),
            "check_support": support("fully", short="25 days"),
            "answer_sentence_supported": "yes",
            "rewrite_query": "annual leave days 2019",
        },
    )
    reranker = ScriptedReranker({"handbook::c0": 0.9}, default=0.2)
    graph, _ = make_graph(llm, reranker=reranker, graph={"confirm_answer": True})
    state = run_turn(
        graph, "How many days of annual leave did Northwind employees get in 2019?", route="single"
    )
    assert state["refused"] and "answer_sentence_supported" not in llm.prompts_called()


def test_a_hosted_model_is_not_asked(make_graph, monkeypatch) -> None:
    # the cut-off is the local model's P(yes); a hosted model's would need its own
    state, llm = confirmed_turn(make_graph, monkeypatch, p_yes=0.01, local=False, confirm_answer=True)
    assert not state["refused"] and "answer_sentence_supported" not in llm.prompts_called()
    assert step(state, "check_support")["confirmation"]["skipped"] == "not calibrated for a hosted model"
