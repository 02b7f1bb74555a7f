"""The state's node contract: per-turn fields declare their starting value once, beside their type."""

from __future__ import annotations

from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.graph import StateGraph
from langgraph.types import Overwrite

from graphs.rag.state import RagState, turn_defaults


def test_a_turn_starts_every_per_turn_field_afresh_and_keeps_the_conversation():
    defaults = turn_defaults()

    assert defaults["route"] is None and defaults["crag_grade"] is None
    assert defaults["ircot_steps"] == defaults["support_retries"] == defaults["crag_retries"] == 0
    assert defaults["query_transform"] == "none"
    assert "messages" not in defaults and "previous_context" not in defaults


def test_accumulating_fields_are_reset_past_their_reducers():
    defaults = turn_defaults()

    for name in ("hits", "queries_issued", "steps", "llm_calls", "llm_input_tokens", "llm_output_tokens"):
        assert isinstance(defaults[name], Overwrite), name
    assert not isinstance(defaults["context"], Overwrite)  # a plain field is simply replaced


def test_the_markers_leave_langgraphs_reducers_in_place():
    channels = StateGraph(RagState).channels

    for name in ("hits", "queries_issued", "steps", "llm_calls"):
        assert isinstance(channels[name], BinaryOperatorAggregate), name


def test_a_fresh_retrieval_resets_retrieval_and_generation_but_not_the_turns_counters():
    fresh = turn_defaults(retrieval_only=True)

    assert set(fresh) == {
        "hits", "passages", "strips", "context", "reused_previous_context", "answer_draft",
        "generator_refused", "strict_generation", "yes_no_verdict", "bridge", "support", "proposed_short_answer",
        "unmet_constraints", "repeated_exclusions",
        "answers_question", "failed_checks",
    }  # fmt: skip
    assert "usefulness_retries" not in fresh and "queries_issued" not in fresh


def test_defaults_are_fresh_copies_each_time():
    first = turn_defaults()
    first["queries"].append("mutated")

    assert turn_defaults()["queries"] == []
