"""The answer-check registry: which checks a draft fails, in what order the edge reads them, what each
does while its loop has room and once it is spent, and that any check can be switched off by name."""

from __future__ import annotations

import pytest

from core.settings import GraphSettings
from graphs.rag.answer_checks import ANSWER_CHECKS, failed_checks, next_step
from graphs.rag.routing import after_support
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import cite, run_turn, step, support

BOUNDS = GraphSettings(
    max_support_retries=1,
    max_usefulness_retries=1,
    regenerate_unsupported=True,
    confirm_answer=True,
    refuse_unmet_constraints=True,
)
DEFAULTS = GraphSettings()


def findings(**changes):
    clean = {
        "unmet_constraints": [],
        "repeated_exclusions": [],
        "verdicts": ["fully"],
        "answers_question": True,
        "answer_confirmed": True,
        "draft_likely": True,
    }
    return clean | changes


def test_a_clean_draft_fails_nothing_and_is_final() -> None:
    assert failed_checks(**findings()) == []
    assert (
        after_support({"failed_checks": [], "support": [{"verdict": "fully"}]}, BOUNDS) == "finalize_answer"
    )


def test_failures_come_in_registry_order_whatever_was_found_first() -> None:
    failures = failed_checks(
        **findings(
            unmet_constraints=["2019"],
            repeated_exclusions=["Oslo"],
            verdicts=["not"],
            answers_question=False,
            answer_confirmed=False,
            draft_likely=False,
        )
    )
    assert [f["check"] for f in failures] == [
        "constraints",
        "exclusions",
        "support",
        "usefulness",
        "unconfirmed_answer",
        "unlikely_draft",
    ]
    assert [f["check"] for f in failures] == [c.name for c in ANSWER_CHECKS]
    assert "2019" in failures[0]["reason"] and "Oslo" in failures[1]["reason"]


@pytest.mark.parametrize(
    ("found", "with_room", "spent"),
    [
        # a year the passages never state near the answer: look again, then refuse
        (findings(unmet_constraints=["2019"]), "usefulness_retry", "refuse"),
        # the excluded item given again: write it again, then refuse
        (findings(repeated_exclusions=["Oslo"]), "regenerate_answer", "refuse"),
        # an unsupported sentence: write it again, then let later checks decide (here: none fail)
        (findings(verdicts=["fully", "not"]), "regenerate_answer", None),
        # an answer beside the question: look again, then refuse
        (findings(answers_question=False), "usefulness_retry", "refuse"),
        # the model's P(yes) under the cut-off for every sentence (switched on): look again, then refuse
        (findings(answer_confirmed=False), "usefulness_retry", "refuse"),
        # the fitted no-call verifier's P(right) under its cut-off (support_verifier 'features')
        (findings(draft_likely=False), "usefulness_retry", "refuse"),
        # not asked (switched off, a hosted model, no probabilities): nothing to act on
        (findings(answer_confirmed=None), None, None),
    ],
)
def test_each_check_acts_while_its_loop_has_room_and_then_as_it_says(found, with_room, spent) -> None:
    failures = failed_checks(**found)
    assert next_step({}, failures, BOUNDS) == with_room
    loops_spent = {"support_retries": 1, "usefulness_retries": 1}
    assert next_step(loops_spent, failures, BOUNDS) == spent


def test_a_spent_check_that_continues_hands_over_to_the_next_failed_one() -> None:
    failures = failed_checks(**findings(verdicts=["not", "fully"], answers_question=False))
    # support's loop is spent, usefulness still has room: re-retrieve
    assert next_step({"support_retries": 1}, failures, BOUNDS) == "usefulness_retry"


def test_by_default_a_rejected_sentence_is_dropped_not_written_again() -> None:
    # The measured default (graph.regenerate_unsupported off): the failure is recorded, not acted on.
    failures = failed_checks(**findings(verdicts=["fully", "not"]))
    assert [f["check"] for f in failures] == ["support"]
    assert next_step({}, failures, DEFAULTS) is None
    state = {"failed_checks": failures, "support": [{"verdict": "fully"}, {"verdict": "not"}]}
    assert after_support(state, DEFAULTS) == "finalize_answer"
    # ... and an excluded item given again is still written again: only support's action is switched.
    assert (
        next_step({}, failed_checks(**findings(repeated_exclusions=["Oslo"])), DEFAULTS)
        == "regenerate_answer"
    )


def test_switched_off_an_unmet_year_is_recorded_not_acted_on() -> None:
    # graph.refuse_unmet_constraints off: for documents whose facts carry no year; the finding stays
    # in the trace for the ablation.
    failures = failed_checks(**findings(unmet_constraints=["2019"]))
    assert [f["check"] for f in failures] == ["constraints"]
    off = GraphSettings(refuse_unmet_constraints=False)
    assert next_step({}, failures, off) is None
    assert next_step({"usefulness_retries": 1}, failures, off) is None
    assert next_step({}, failures, DEFAULTS) == "usefulness_retry"


def test_the_fitted_verifier_acts_on_chains_only_while_switched_on() -> None:
    # graph.unlikely_draft_on_chains: the verifier was fitted on single-hop drafts; off (the default), its
    # verdict on an iterative-route draft is recorded only, and the single route is unchanged.
    failures = failed_checks(**findings(draft_likely=False))
    assert [f["check"] for f in failures] == ["unlikely_draft"]
    off = GraphSettings(unlikely_draft_on_chains=False)
    assert next_step({"route": "iterative"}, failures, off) is None
    assert next_step({"route": "single"}, failures, off) == "usefulness_retry"
    on = GraphSettings(unlikely_draft_on_chains=True)
    assert next_step({"route": "iterative"}, failures, on) == "usefulness_retry"
    assert not DEFAULTS.unlikely_draft_on_chains  # measured: docs/benchmarks.md, session 36
    # another check still acts on a chain's draft
    both = failed_checks(**findings(draft_likely=False, verdicts=["not"]))
    assert next_step({"route": "iterative"}, both, off) is None  # the rewrite after "not" is off by default
    spent = {"route": "iterative", "usefulness_retries": 1}
    assert next_step(spent, failed_checks(**findings(answers_question=False)), off) == "refuse"


def test_a_check_switched_off_is_not_run() -> None:
    found = findings(unmet_constraints=["2019"], verdicts=["not"])
    assert [f["check"] for f in failed_checks(**found, checks_off={"constraints"})] == ["support"]
    assert failed_checks(**found, checks_off={"constraints", "support"}) == []


def test_no_check_is_a_case_where_every_sentence_is_unsupported_and_still_shown() -> None:
    # With the support check off the draft is not rewritten, but a draft the judge found wholly
    # unsupported is still never presented as an answer.
    state = {"failed_checks": [], "support": [{"verdict": "not"}]}
    assert after_support(state, BOUNDS) == "refuse"


def test_graph_checks_off_names_only_real_checks() -> None:
    with pytest.raises(ValueError, match="checks_off"):
        GraphSettings(checks_off=["spelling"])


QUESTION = "How many days of annual leave do Northwind employees get?"
ANSWER = cite("Northwind employees get 25 days of annual leave.", "25 days")


def test_switching_the_support_check_off_keeps_the_draft_the_judge_half_rejected(make_graph) -> None:
    two_sentences = lambda messages: ANSWER(messages) + " The policy also covers unicorn riding lessons. [1]"  # noqa: E731
    replies = {
        "generate_answer": two_sentences,
        "generate_answer_strict": ANSWER,
        "check_support": support("fully", "not"),
    }
    on = ScriptedChatModel(replies=dict(replies))
    graph, _ = make_graph(on, reranker=ScriptedReranker(default=0.9), graph={"regenerate_unsupported": True})
    checked = run_turn(graph, QUESTION, route="single")
    assert on.prompts_called().count("generate_answer_strict") == 1  # the support check asked again
    first, second = [s["decision"] for s in checked["steps"] if s["node"] == "check_support"]
    assert [f["check"] for f in first["failed_checks"]] == ["support"] and second["failed_checks"] == []

    off = ScriptedChatModel(replies=dict(replies))
    graph, _ = make_graph(
        off,
        reranker=ScriptedReranker(default=0.9),
        graph={"checks_off": ["support"], "regenerate_unsupported": True},
    )
    unchecked = run_turn(graph, QUESTION, route="single")
    assert off.prompts_called().count("generate_answer_strict") == 0
    assert step(unchecked, "check_support")["checks_off"] == ["support"]
    assert "25 days" in unchecked["answer"] and not unchecked["refused"]
