"""The live tree printer and the JSON Lines printer."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

from rich.console import Console

from agent.tracing import RunTrace, StepEvent
from agent.tracing.json_lines import JsonLinesPrinter
from agent.tracing.tree import LiveTreePrinter, print_tree, step_tree
from tests.agent.tracing.conftest import record_tiny_run


def _render(renderable) -> str:
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def _step(decision: dict) -> StepEvent:
    return StepEvent.from_step_entry(
        {
            "node": "some_node",
            "started_at": datetime(2026, 1, 1, tzinfo=UTC),
            "ms": 12.5,
            "decision": decision,
        },
        run_id="r",
        seq=1,
    )


def test_route_is_shown_with_its_confidence() -> None:
    text = _render(step_tree(_step({"route": "iterative", "confidence": 0.8125, "reason": "comparison"})))
    assert "route: iterative (confidence 0.812)" in text
    assert "reason: comparison" in text
    assert "confidence:" not in text  # folded into the route line


def test_hits_show_each_leg_rank_and_score_and_rerank() -> None:
    hit = {
        "chunk_id": "doc-1#3",
        "title": "Falcon design",
        "score": 0.0325,
        "legs": {"dense": {"rank": 2, "score": 0.81}, "sparse": {"rank": 1, "score": 7.25}},
        "rerank_score": 0.92,
    }
    text = _render(step_tree(_step({"hits": [hit]})))
    assert "#1 Falcon design" in text and "doc-1#3" in text
    assert "dense #2 (0.81) · sparse #1 (7.25)" in text
    assert "rerank 0.92" in text


def test_support_verdicts_retries_and_llm_usage_read_plainly() -> None:
    decision = {
        "support": [
            {"sentence": "Falcon answers in 40 ms.", "verdict": "fully"},
            {"sentence": "It is blue.", "verdict": "not"},
        ],
        "support_retries": {"counter": 1, "bound": 1},
        "llm_calls": 2,
        "llm_tokens": {"input": 812, "output": 64},
        "web": "unavailable",
    }
    text = _render(step_tree(_step(decision)))
    assert "fully Falcon answers in 40 ms." in text and "not It is blue." in text
    assert "support_retries: 1/1" in text
    assert "LLM calls: 2, 812 input tokens, 64 output tokens" in text
    assert "web: unavailable" in text


def test_long_lists_are_cut_with_a_count_of_the_rest() -> None:
    text = _render(step_tree(_step({"hits": [{"chunk_id": f"c{i}", "score": 1.0} for i in range(14)]})))
    assert "#10 c9" in text and "#11" not in text and "4 more" in text


def test_unknown_decision_keys_are_still_shown() -> None:
    text = _render(step_tree(_step({"strips_kept": 3, "nested": {"a": [1, 2]}})))
    assert "strips_kept: 3" in text and "a: 1, 2" in text


def test_replay_prints_every_step_and_the_answer(retry_trace: RunTrace) -> None:
    console = Console(record=True, width=120, file=io.StringIO())
    print_tree(retry_trace, console)
    text = console.export_text()
    assert text.count("retrieve") >= 2 and text.count("grade") == 2
    assert "retry: 1/1" in text and "CRAG action: give_up" in text
    assert "The sources do not say." in text


def test_live_printer_prints_each_step_as_it_arrives(tmp_path) -> None:
    console = Console(record=True, width=120, file=io.StringIO())
    record_tiny_run(None, "What is the Falcon latency?", sinks=[LiveTreePrinter(console)])
    text = console.export_text()
    order = [text.index(n) for n in ("start_turn", "retrieve", "grade", "generate", "answer")]
    assert order == sorted(order)
    assert "Falcon latency" in text and "dense #1" in text


def test_json_lines_are_one_event_per_step_then_the_answer_object() -> None:
    out = io.StringIO()
    trace = record_tiny_run(None, "What is the Falcon latency?", sinks=[JsonLinesPrinter(out)])
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line.get("node") for line in lines[:-1]] == ["start_turn", "retrieve", "grade", "generate"]
    assert all(line["type"] == "step" and line["run_id"] == "run-1" for line in lines[:-1])
    assert lines[-1] == trace.answer


def test_flat_records_in_a_list_read_as_one_line_each() -> None:
    strips = [{"chunk_id": "hb::2", "text": "Up to 5 unused days can be carried over.", "score": 1.0}]
    text = _render(step_tree(_step({"kept": strips})))
    assert "kept (1)" in text
    assert "Up to 5 unused days can be carried over.  chunk_id hb::2 · score 1" in text
