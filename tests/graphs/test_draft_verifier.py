"""``graph.support_verifier='features'`` (and 'auto' with the bundled model and the offline reranker): no
judge call; a model fitted on the draft's no-call features decides whether it is shown. How well it
decides is the bench's business (``bench.draft_classifier``); here the features, the fitted model's
shape and the wiring are pinned down."""

from __future__ import annotations

import pytest

from core.settings import load_settings
from graphs.rag.nodes.draft_verifier import draft_features, draft_verdict, load_draft_verifier
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import cite, nodes_run, passages_in, run_turn, step, support
from tools.knowledge_base.sparse import tokenize
from tools.rerank.factory import get_reranker

QUESTION = "How many days of annual leave do Northwind employees get?"

# A bike shop's opening hours: one passage states the answer, the other is beside it.
CONTEXT = [
    {"n": 1, "chunk_id": "shop::0", "title": "Opening hours", "text": "The shop opens at 9 am on Saturdays."},
    {"n": 2, "chunk_id": "shop::1", "title": "Repairs", "text": "Repairs take three working days."},
]
HITS = [{"chunk_id": "shop::0", "rerank_score": 0.9}, {"chunk_id": "shop::1", "rerank_score": 0.1}]


def features_of(draft: str, language: str = "en") -> dict:
    state = {"answer_draft": draft, "context": CONTEXT, "hits": HITS, "language": language}
    return draft_features(state, tokenize)


def test_a_sentence_its_passage_states_scores_above_one_its_passage_does_not() -> None:
    stated = features_of("The shop opens at 9 am on Saturdays. [1]")
    invented = features_of("The owner is a former racing cyclist from Lyon. [2]")
    assert stated["sentence_shares"] == [1.0] and invented["sentence_shares"][0] < 0.3
    assert stated["cited_rerank"] == 0.9 and invented["cited_rerank"] == 0.1
    assert draft_verdict(stated)["p_right"] > draft_verdict(invented)["p_right"]
    assert draft_verdict(stated)["kept"] and not draft_verdict(invented)["kept"]


def test_an_uncited_draft_is_counted_and_lowers_the_score() -> None:
    cited = features_of("The shop opens at 9 am on Saturdays. [1]")
    uncited = features_of("The shop opens at 9 am on Saturdays.")
    assert uncited["uncited_sentences"] == 1 and uncited["cited_rerank"] is None
    assert draft_verdict(uncited)["p_right"] < draft_verdict(cited)["p_right"]


def test_the_fitted_model_names_its_columns_and_where_it_was_measured() -> None:
    model = load_draft_verifier()
    assert set(model["weights_per_sd"]) == {
        "best_share",
        "log_p_not_found",
        "cited_rerank",
        "uncited",
        "chinese",
    }
    assert all(model["sd"][name] > 0 for name in model["weights_per_sd"])
    assert 0.0 < model["cut"] < 1.0 and "bench.draft_classifier" in model["fitted_on"]


def verified_turn(make_graph, reply, short='{"short_answer": "25 days"}'):
    llm = ScriptedChatModel(
        replies={"generate_answer": reply, "rewrite_query": "annual leave days", "short_answer": short}
    )
    graph, _ = make_graph(
        llm,
        reranker=ScriptedReranker({"handbook::c0": 0.9}, default=0.2),
        graph={"support_verifier": "features"},
    )
    return run_turn(graph, QUESTION, route="single"), llm


def test_a_stated_answer_is_shown_without_asking_the_judge(make_graph) -> None:
    state, llm = verified_turn(
        make_graph, cite("Employees get 25 days of paid annual leave per year.", "25 days")
    )
    assert not state["refused"] and "25 days" in state["answer"]
    assert "check_support" not in llm.prompts_called()
    checked = step(state, "check_support")
    assert checked["verifier"] == "features" and checked["kept"] and checked["failed_checks"] == []
    assert state["short_answer"] == "25 days" and llm.prompts_called().count("short_answer") == 1


def test_a_sentence_its_passage_states_is_labelled_stated_and_not_flagged(make_graph) -> None:
    state, _ = verified_turn(
        make_graph, cite("Employees get 25 days of paid annual leave per year.", "25 days")
    )
    assert [v["verdict"] for v in state["support"]] == ["stated"]
    assert step(state, "finalize_answer")["sentences_flagged"] == []


def test_a_kept_sentence_its_passage_does_not_state_stays_unchecked_and_is_flagged(make_graph) -> None:
    # Cited and kept, but worded from elsewhere: code cannot say the passage states it.
    def two_cited_sentences(messages):
        n = next(n for n, text in passages_in(messages).items() if "25 days" in text)
        return f"Employees get 25 days of paid annual leave per year. [{n}] Staff also enjoy generous perks. [{n}]"

    state, _ = verified_turn(make_graph, two_cited_sentences)
    verdicts = {v["sentence"][:20]: v["verdict"] for v in state["support"]}
    assert verdicts == {"Employees get 25 day": "stated", "Staff also enjoy gen": "unchecked"}


def test_the_short_call_reads_the_question_and_the_answer_but_no_passage(make_graph) -> None:
    _, llm = verified_turn(
        make_graph, cite("Employees get 25 days of paid annual leave per year.", "25 days")
    )
    [(_, messages)] = [call for call in llm.calls if call[0] == "short_answer"]
    sent = messages[-1].content
    assert QUESTION in sent and "Employees get 25 days" in sent and "<passage" not in sent


def test_a_short_answer_the_answer_does_not_state_is_not_shown(make_graph) -> None:
    state, _ = verified_turn(
        make_graph,
        cite("Employees get 25 days of paid annual leave per year.", "25 days"),
        short='{"short_answer": "30 days"}',
    )
    assert not state["refused"] and "25 days" in state["answer"] and state["short_answer"] == ""


def test_a_broken_short_reply_costs_the_short_answer_only(make_graph) -> None:
    state, _ = verified_turn(
        make_graph, cite("Employees get 25 days of paid annual leave per year.", "25 days"), short="25 days"
    )
    assert not state["refused"] and "25 days" in state["answer"] and state["short_answer"] == ""
    assert "short_answer_error" in step(state, "check_support")


def test_an_invented_answer_is_looked_up_again_then_refused(make_graph) -> None:
    state, llm = verified_turn(make_graph, "Employees may bring their dogs to the office on Fridays.")
    assert state["refused"] and "check_support" not in llm.prompts_called()
    assert "short_answer" not in llm.prompts_called()  # a draft nobody is shown needs no short answer
    assert nodes_run(state).count("check_support") == 2 and "usefulness_retry" in nodes_run(state)
    assert "unlikely_draft" in [f["check"] for f in step(state, "check_support")["failed_checks"]]


@pytest.mark.parametrize(
    ("setting", "local", "offline_reranker", "resolved"),
    [
        ("auto", True, True, "features"),  # the reader and reranker it was fitted with
        ("auto", False, True, "judge"),  # a hosted model: its P(NOT_FOUND) is not the one fitted
        ("auto", True, False, "judge"),  # Cohere or a cross-encoder: other score scales
        ("judge", True, True, "judge"),
        ("features", False, False, "features"),  # asked for by name: used as asked
    ],
)
def test_auto_uses_the_fitted_verifier_only_where_its_inputs_mean_what_they_were_fitted_on(
    monkeypatch, tmp_path, setting, local, offline_reranker, resolved
) -> None:
    settings = load_settings(home=tmp_path, graph={"support_verifier": setting})
    monkeypatch.setattr(Resources, "llm_is_local", property(lambda self: local))
    # The offline reranker as the factory builds it by default (inside the fusion blend).
    reranker = get_reranker(settings, provider="offline") if offline_reranker else ScriptedReranker()
    resources = Resources(settings, llm=ScriptedChatModel(replies={}), reranker=reranker)
    assert resources.support_verifier == resolved


def test_a_scripted_model_gets_the_judge_by_default(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Employees get 25 days of paid annual leave per year.", "25 days"),
            "rewrite_query": "annual leave days",
            "check_support": support("fully", short="25 days"),
        }
    )
    graph, _ = make_graph(llm, reranker=ScriptedReranker({"handbook::c0": 0.9}, default=0.2))
    state = run_turn(graph, QUESTION, route="single")
    assert step(state, "check_support")["verifier"] == "judge" and "check_support" in llm.prompts_called()
