"""The direct-probe benchmark's figures: ROC AUC of the probe score and the share above a threshold,
and both question sets it reads."""

from __future__ import annotations

import bench.direct_probe as direct_probe


def test_auc_counts_pairs_ordered_right_and_ties_as_half() -> None:
    assert direct_probe.roc_auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert direct_probe.roc_auc([0.1], [0.9]) == 0.0
    assert direct_probe.roc_auc([0.5], [0.5]) == 0.5


def test_share_counts_scores_strictly_above_the_threshold() -> None:
    # The node escalates above graph.crag_upper, not at it.
    assert direct_probe.share([0.52, 0.53, 0.1, 0.9], 0.52) == 0.5
    assert direct_probe.share([], 0.52) == 0.0


def test_question_sets_are_the_follow_up_turn_ones_and_the_written_direct_ones() -> None:
    documents = direct_probe.document_questions()
    direct = direct_probe.direct_questions()
    assert len(documents) == 42 and all(q["kind"] == "document" for q in documents)
    assert len(direct) == 89 and {q["kind"] for q in direct} == {"greeting", "arithmetic", "general", "task"}
