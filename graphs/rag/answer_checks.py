"""The checks an answer draft must pass before it is shown: one registry, read by ``routing.after_support``.

``check_support`` gathers the findings (the judge's per-sentence verdicts and "answers the question", the
question's constraints near the short answer, an excluded item given again, and, when switched on, the
local model's confirmation) and records each check that fails as a ``FailedCheck``: its name, the action it asks for (write the answer again, or retrieve again)
and what to do once that action's loop is spent (refuse, or let the later checks decide). The edge takes
the first failed check whose loop still has room; a check that is spent and says "refuse" ends the turn.
With nothing failed the answer is final, unless the judge found no sentence supported. A check whose
action is switched off by its setting (``acts_when``) is recorded and not acted on: the judge's
rejection regenerates only with ``graph.regenerate_unsupported`` (the measured default is off; the
rejected sentences are still dropped, and a draft with none supported is refused). A check may also
act on the iterative route only under a setting (``acts_on_chains_when``): the fitted draft verifier,
fitted on single-hop drafts, does not by default (``graph.unlikely_draft_on_chains``).

Two more checks adjust the verdicts before the support check reads them: a sentence citing no passage,
and a sentence stating a number its passages and the question never state, are 'not' supported.

Every check can be switched off by name (``graph.checks_off``) so that the ablation bench can measure
what each one gains and loses on questions it was not written from.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from core.settings import GraphSettings
from core.vocabulary import AnswerCheckName

Action = Literal["regenerate", "retrieve_again"]
WhenSpent = Literal["refuse", "continue"]


class FailedCheck(TypedDict):
    check: AnswerCheckName
    action: Action
    when_spent: WhenSpent
    reason: str


@dataclass(frozen=True)
class AnswerCheck:
    name: AnswerCheckName
    action: Action  # while its loop has room
    when_spent: WhenSpent  # once it has none
    acts_when: str | None = None  # a GraphSettings switch: while it is off the failure is only recorded
    # a GraphSettings switch: while it is off, a failure on the iterative route is only recorded (a check
    # fitted on single-hop drafts need not carry to chains)
    acts_on_chains_when: str | None = None


# In the order the edge reads them: a missing year or edition first (the answer is about something else,
# so regenerating cannot help), then an excluded item given again, then unsupported sentences, then an
# answer that does not address the question, then an answer the local model does not confirm.
ANSWER_CHECKS: tuple[AnswerCheck, ...] = (
    # Its action is graph.refuse_unmet_constraints (on; what it wins and loses is measured there).
    AnswerCheck("constraints", "retrieve_again", "refuse", acts_when="refuse_unmet_constraints"),
    AnswerCheck("exclusions", "regenerate", "refuse"),
    # Regenerating after the judge's rejection measured 1 won / 4 lost on the 32 held-out questions it
    # fired on, for 0.63 more LLM calls per question (docs/benchmarks.md, the ablation): off by default.
    AnswerCheck("support", "regenerate", "continue", acts_when="regenerate_unsupported"),
    # An answer beside the question is refused once the loop is spent: of 21 held-out first drafts the
    # judge said did not answer (three sets), the 3 right ones had every sentence rejected anyway and
    # the 2 it kept a sentence of answered unanswerable questions (bench.verifier_set).
    AnswerCheck("usefulness", "retrieve_again", "refuse"),
    # The local model's P(yes) that a sentence is stated and answers the question, under the cut-off
    # calibrated on the calibration split (bench.verifier_set); asked (a call per sentence) only of a
    # draft no other check acts on, and only with graph.confirm_answer (off: 2 won / 0 lost on 60 fresh
    # report questions for +1.17 calls each, but it refused a right follow-up answer of the handbook).
    AnswerCheck("unconfirmed_answer", "retrieve_again", "refuse", acts_when="confirm_answer"),
    # With graph.support_verifier 'features' the judge is not asked: the fitted no-call verifier's
    # P(right) under its cut-off retrieves again once, then refuses (bench.draft_classifier).
    AnswerCheck("unlikely_draft", "retrieve_again", "refuse", acts_on_chains_when="unlikely_draft_on_chains"),
)

CHECKS: dict[str, AnswerCheck] = {c.name: c for c in ANSWER_CHECKS}

# Each action's loop: its counter in the state, its bound in GraphSettings, and the node that runs it.
LOOPS: dict[Action, tuple[str, str, str]] = {
    "regenerate": ("support_retries", "max_support_retries", "regenerate_answer"),
    "retrieve_again": ("usefulness_retries", "max_usefulness_retries", "usefulness_retry"),
}


def failed_checks(
    *,
    unmet_constraints: Sequence[str],
    repeated_exclusions: Sequence[str],
    verdicts: Sequence[str],
    answers_question: bool | None,
    answer_confirmed: bool | None = None,
    draft_likely: bool | None = None,
    checks_off: Collection[str] = (),
) -> list[FailedCheck]:
    """The checks this draft fails, in registry order (those switched off are not run)."""
    reasons: dict[AnswerCheckName, str] = {}
    if unmet_constraints:
        reasons["constraints"] = f"no cited passage states {', '.join(unmet_constraints)} near the answer"
    if repeated_exclusions:
        reasons["exclusions"] = (
            f"the answer gives {', '.join(repeated_exclusions)}, which the question excludes"
        )
    if "not" in verdicts:
        reasons["support"] = f"{verdicts.count('not')} of {len(verdicts)} sentences not supported"
    if answers_question is False:
        reasons["usefulness"] = "the judge found the answer does not address the question"
    if answer_confirmed is False:
        reasons["unconfirmed_answer"] = (
            "the model doubts every sentence answers the question from its passages"
        )
    if draft_likely is False:
        reasons["unlikely_draft"] = "the fitted verifier finds the draft unlikely to be right"
    return [
        FailedCheck(check=c.name, action=c.action, when_spent=c.when_spent, reason=reasons[c.name])
        for c in ANSWER_CHECKS
        if c.name in reasons and c.name not in checks_off
    ]


def next_step(
    state: Mapping[str, Any], failures: Sequence[FailedCheck], bounds: GraphSettings
) -> Literal["regenerate_answer", "usefulness_retry", "refuse"] | None:
    """The node the first actionable failure sends the turn to, or None when the answer may be final."""
    for failure in failures:
        check = CHECKS[failure["check"]]
        if check.acts_when is not None and not getattr(bounds, check.acts_when):
            continue  # recorded for the trace and the ablation; its action is switched off
        on_chains = check.acts_on_chains_when
        if on_chains is not None and state.get("route") == "iterative" and not getattr(bounds, on_chains):
            continue
        counter, bound, node = LOOPS[failure["action"]]
        if state.get(counter, 0) < getattr(bounds, bound):
            return node  # type: ignore[return-value]
        if failure["when_spent"] == "refuse":
            return "refuse"
    return None
