"""The follow-up rewrite benchmark: its held-out cases and how a rewrite is judged."""

from __future__ import annotations

import json
from pathlib import Path

import bench.follow_up_rewrites as follow_up_rewrites

REPO = Path(__file__).resolve().parents[2]


def test_cases_cover_four_patterns_in_both_languages_and_none_is_from_the_follow_up_benchmark() -> None:
    cases = follow_up_rewrites.load_cases()
    assert {c["pattern"] for c in cases} == {"pronoun", "ellipsis", "what_else", "standalone"}
    assert {c["language"] for c in cases} == {"en", "zh"}
    assert len({c["id"] for c in cases}) == len(cases)
    assert all(c["expect"] for c in cases)
    assert all(c.get("forbid") for c in cases if c["pattern"] == "standalone")
    conversations = json.loads((REPO / "bench" / "follow_ups" / "conversations.json").read_text("utf-8"))
    asked_there = {c["turn1"] for c in conversations}  # generic turns ("What about 2022?") may recur
    assert not asked_there & {question for c in cases for question, _ in c["history"]}


def test_a_rewrite_passes_when_it_names_what_is_expected_and_nothing_forbidden() -> None:
    case = {"latest": "会议室在哪里？", "expect": ["会议室"], "forbid": ["打印机"]}
    assert follow_up_rewrites.passes(case, "会议室在哪里？")
    assert not follow_up_rewrites.passes(case, "打印机旁边的会议室在哪里？")
    assert not follow_up_rewrites.passes(case, "哪里？")
    assert follow_up_rewrites.passes(
        {"latest": "How long is it?", "expect": ["Bridge"]}, "How long is the bridge?"
    )
