"""The answer gate (``check_answerable``): the local model's P(yes) that the passages state the answer,
against the question language's cut-off, decides whether an answer is written at all.

The real model's judgement is tested in ``test_local_llm.py``; here a scripted model stands in for it
(reporting first-token probabilities like the local one) to pin down the wiring."""

from __future__ import annotations

from typing import Any

from core.settings import load_settings
from graphs.rag.nodes.check_answerable import check_answerable
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel, ScriptedLocalModel

PASSAGE = {"n": 1, "chunk_id": "c::0", "doc_id": "c", "source": "cup.md", "title": "Cup", "page": None,
           "url": None, "origin": "kb", "text": "The 2023 Harbour Cup was won by the Gulls."}  # fmt: skip


class LocalResources(Resources):
    llm_is_local = True  # type: ignore[assignment]


def run_gate(p_yes: float, language: str = "en", route: str = "single", **graph: Any):
    llm = ScriptedLocalModel(p_yes={"passages_state_answer": p_yes}, replies={"passages_state_answer": "yes"})
    resources = LocalResources(load_settings(graph={"answer_gate": {}} | graph), llm=llm)
    state = {
        "standalone_question": "Who won the cup?",
        "language": language,
        "route": route,
        "context": [PASSAGE],
    }
    update = check_answerable(state, {}, resources=resources)
    return update, update["steps"][-1]["decision"], llm.prompts_called()


def test_below_the_cut_off_the_turn_counts_as_not_found() -> None:
    update, decision, called = run_gate(p_yes=0.1)

    assert called == ["passages_state_answer"]
    assert update["generator_refused"] is True
    assert (decision["p_yes"], decision["cutoff"], decision["passed"]) == (0.1, 0.27, False)


def test_at_or_above_the_cut_off_the_answer_is_written() -> None:
    update, decision, _ = run_gate(p_yes=0.4)

    assert update["generator_refused"] is False and decision["passed"] is True


def test_a_chinese_question_is_held_to_the_chinese_cut_off() -> None:
    update, decision, _ = run_gate(
        p_yes=0.4, language="zh"
    )  # passes in English (0.27), not in Chinese (0.50)

    assert decision["cutoff"] == 0.5 and update["generator_refused"] is True


def test_the_gate_is_off_for_iterative_questions_and_when_set_to_none() -> None:
    for update, decision, called in (
        run_gate(p_yes=0.01, route="iterative"),
        run_gate(p_yes=0.01, answer_gate=None),
    ):
        assert called == [] and "generator_refused" not in update
        assert decision["skipped"]


def test_a_model_other_than_the_local_one_is_not_gated() -> None:
    llm = ScriptedChatModel(replies={})
    state = {
        "standalone_question": "Who won the cup?",
        "language": "en",
        "route": "single",
        "context": [PASSAGE],
    }

    update = check_answerable(
        state, {}, resources=Resources(load_settings(graph={"answer_gate": {}}), llm=llm)
    )

    assert llm.prompts_called() == []
    assert update["steps"][-1]["decision"]["skipped"] == "not calibrated for a hosted model"


def test_a_gated_question_is_retrieved_again_then_refused_without_an_answer_call(
    make_graph, monkeypatch
) -> None:
    from tests.graphs.helpers import ScriptedReranker
    from tests.graphs.scripts import nodes_run, run_turn

    monkeypatch.setattr(Resources, "llm_is_local", True)  # make_graph's Resources: treat the script as local
    llm = ScriptedLocalModel(
        p_yes={"passages_state_answer": 0.05},
        replies={"passages_state_answer": "no", "rewrite_query": "annual leave"},
    )
    graph, _ = make_graph(
        llm, reranker=ScriptedReranker({"handbook::c0": 0.9}, default=0.2), graph={"answer_gate": {}}
    )
    result = run_turn(graph, "How many days of annual leave do Northwind employees get?", route="single")

    assert result["refused"] and nodes_run(result).count("check_answerable") == 2
    assert "generate_answer" not in llm.prompts_called()


def test_the_gate_is_off_by_default() -> None:
    # It did not carry over from the labelled set to the pipeline's contexts (docs/benchmarks.md).
    assert load_settings().graph.answer_gate is None
    llm = ScriptedLocalModel(p_yes={"passages_state_answer": 0.01}, replies={})
    state = {
        "standalone_question": "Who won the cup?",
        "language": "en",
        "route": "single",
        "context": [PASSAGE],
    }

    update = check_answerable(state, {}, resources=LocalResources(load_settings(), llm=llm))

    assert (
        llm.prompts_called() == []
        and update["steps"][-1]["decision"]["skipped"] == "graph.answer_gate is off"
    )
