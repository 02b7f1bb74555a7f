"""A readable tree of a run's steps (rich), printed live as nodes finish or replayed from a stored run.

Each step is one branch: the node, its duration, and its decision in plain terms. Decision keys the
graph commonly writes (route and confidence, queries, hits with per-leg ranks and scores, CRAG grades
and action, strips kept, web fallback, support verdicts, retry counters with their bounds, LLM calls and
tokens) get a tailored line; any other key is still shown, generically, so nothing a node decided is
hidden.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from agent.tracing.events import RunStarted, RunTrace, StepEvent

MAX_LIST_ITEMS = 10
MAX_TEXT = 160


def _short(value: Any, limit: int = MAX_TEXT) -> str:
    text = (
        value
        if isinstance(value, str)
        else repr(value)
        if not isinstance(value, int | float)
        else _num(value)
    )
    text = " ".join(str(text).split())
    return escape(text if len(text) <= limit else text[: limit - 1] + "…")


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def _hit_line(index: int, hit: Mapping[str, Any]) -> str:
    """``#1 title · p.3  score 0.03  dense #2 (0.81) · bm25 #1 (7.2)  rerank 0.92``."""
    label = hit.get("title") or hit.get("source") or hit.get("url") or hit.get("chunk_id") or "?"
    parts = [f"#{index} {_short(label, 60)}"]
    if hit.get("chunk_id") and hit.get("chunk_id") != label:
        parts.append(f"[dim]{_short(hit['chunk_id'], 40)}[/]")
    if hit.get("origin") == "web":
        parts.append("[magenta]web[/]")
    for score_key, label in (("score", "score"), ("fused_score", "fused")):
        if hit.get(score_key) is not None:
            parts.append(f"{label} {_num(hit[score_key])}")
    legs = hit.get("legs") or {}
    if isinstance(legs, Mapping) and legs:
        leg_texts = []
        for leg, value in legs.items():
            if isinstance(value, Mapping):
                leg_texts.append(f"{leg} #{value.get('rank', '?')} ({_num(value.get('score', 0.0))})")
            elif isinstance(value, list | tuple) and len(value) == 2:
                leg_texts.append(f"{leg} #{value[0]} ({_num(value[1])})")
        parts.append("[cyan]" + escape(" · ".join(leg_texts)) + "[/]")
    if hit.get("rerank_score") is not None:
        parts.append(f"rerank {_num(hit['rerank_score'])}")
    if hit.get("grade") is not None:
        parts.append(f"grade {_num(hit['grade'])}")
    return "  ".join(parts)


def _verdict_line(item: Mapping[str, Any]) -> str:
    verdict = str(item.get("verdict") or item.get("support") or item.get("label") or "?")
    colour = {
        "fully": "green",
        "supported": "green",
        "stated": "green",
        "partially": "yellow",
        "partial": "yellow",
    }.get(verdict.lower(), "red")
    sentence = item.get("sentence") or item.get("text") or ""
    return f"[{colour}]{escape(verdict)}[/] {_short(sentence, 120)}"


def _flat_item_line(item: Mapping[str, Any]) -> str:
    """A flat record on one line: its short fields, then its text (e.g. a kept strip and its score)."""
    text = item.get("text") or item.get("sentence")
    fields = [f"{escape(str(k))} {_short(v, 60)}" for k, v in item.items() if k not in ("text", "sentence")]
    line = " · ".join(fields)
    return f"{_short(text, 110)}  [dim]{line}[/]" if text else line


def _add_value(branch: Tree, key: str, value: Any) -> None:
    """Generic rendering: scalars on one line, short scalar lists inline, the rest as sub-branches."""
    if isinstance(value, Mapping):
        sub = branch.add(f"{escape(key)}")
        for sub_key, sub_value in value.items():
            _add_value(sub, str(sub_key), sub_value)
    elif isinstance(value, list | tuple):
        if all(not isinstance(v, Mapping | list | tuple) for v in value):
            shown = ", ".join(_short(v, 60) for v in value[:MAX_LIST_ITEMS])
            more = f" … (+{len(value) - MAX_LIST_ITEMS})" if len(value) > MAX_LIST_ITEMS else ""
            branch.add(f"{escape(key)}: {shown}{more}")
        else:
            sub = branch.add(f"{escape(key)} ({len(value)})")
            for item in value[:MAX_LIST_ITEMS]:
                if isinstance(item, Mapping) and all(
                    not isinstance(v, Mapping | list | tuple) for v in item.values()
                ):
                    sub.add(_flat_item_line(item))
                elif isinstance(item, Mapping):
                    _add_value(sub, "•", item)
                else:
                    sub.add(_short(item))
            if len(value) > MAX_LIST_ITEMS:
                sub.add(f"[dim]… {len(value) - MAX_LIST_ITEMS} more[/]")
    else:
        branch.add(f"{escape(key)}: {_short(value)}")


def _retry_text(value: Mapping[str, Any]) -> str | None:
    if "counter" in value and "bound" in value:
        return f"{value['counter']}/{value['bound']}"
    return None


def add_decision(branch: Tree, decision: Mapping[str, Any]) -> None:
    """Render a node's decision dict under ``branch``."""
    # Companion keys are folded into another key's line (confidence next to route, tokens next to calls).
    folded = set()
    if "route" in decision:
        folded.add("confidence")
    if "llm_calls" in decision:
        folded.update({"tokens", "llm_tokens", "prompt_tokens", "completion_tokens"})
    if "counter" in decision and "bound" in decision:
        folded.add("bound")
    for key, value in decision.items():
        if key in folded:
            continue
        if key == "route":
            confidence = decision.get("confidence")
            extra = f" (confidence {_num(confidence)})" if confidence is not None else ""
            branch.add(f"route: [bold]{_short(value)}[/]{extra}")
        elif key == "counter" and "bound" in decision:
            branch.add(f"retry {decision['counter']}/{decision['bound']}")
        elif key == "llm_calls":
            tokens = [
                f"{decision[k]} {k.replace('_', ' ')}"
                for k in ("tokens", "prompt_tokens", "completion_tokens")
                if decision.get(k) is not None
            ]
            llm_tokens = decision.get("llm_tokens")
            if isinstance(llm_tokens, Mapping):
                tokens += [f"{amount} {kind.replace('_', ' ')} tokens" for kind, amount in llm_tokens.items()]
            branch.add(f"LLM calls: {value}" + (f", {', '.join(tokens)}" if tokens else ""))
        elif key in ("queries", "query") and isinstance(value, list):
            sub = branch.add(f"queries ({len(value)})")
            for query in value[:MAX_LIST_ITEMS]:
                sub.add(_short(query if not isinstance(query, Mapping) else query.get("query", query)))
        elif key in ("hits", "kept_hits", "web_hits") and isinstance(value, list):
            sub = branch.add(f"{escape(key)} ({len(value)})")
            for index, hit in enumerate(value[:MAX_LIST_ITEMS], start=1):
                sub.add(_hit_line(index, hit) if isinstance(hit, Mapping) else _short(hit))
            if len(value) > MAX_LIST_ITEMS:
                sub.add(f"[dim]… {len(value) - MAX_LIST_ITEMS} more[/]")
        elif key in ("verdicts", "support", "support_verdicts") and isinstance(value, list):
            sub = branch.add(f"support verdicts ({len(value)})")
            for item in value[:MAX_LIST_ITEMS]:
                sub.add(_verdict_line(item) if isinstance(item, Mapping) else _short(item))
        elif key in ("crag_action", "action"):
            branch.add(f"CRAG action: [bold]{_short(value)}[/]")
        elif key in ("grade", "crag_grade") and isinstance(value, str):
            branch.add(f"CRAG grade: [bold]{_short(value)}[/]")
        elif isinstance(value, Mapping) and _retry_text(value) is not None:
            branch.add(f"{escape(key)}: {_retry_text(value)}")
        else:
            _add_value(branch, key, value)


def step_tree(step: StepEvent) -> Tree:
    """One step as a small tree: ``[seq] node  (ms)`` and its decision underneath."""
    branch = Tree(f"[bold blue]{escape(step.node)}[/]  [dim]{step.ms:.0f} ms[/]", guide_style="dim")
    add_decision(branch, step.decision)
    return branch


def _answer_tree(trace: RunTrace) -> Tree:
    if trace.error:
        return Tree(f"[bold red]error[/] {_short(trace.error)}")
    answer = trace.answer or {}
    root = Tree(f"[bold green]answer[/]  [dim]{trace.total_ms:.0f} ms total[/]", guide_style="dim")
    root.add(_short(answer.get("answer", ""), 400))
    facts = [
        f"{key} {answer[key]}"
        for key in ("route", "crag_action", "refused", "llm_calls")
        if answer.get(key) is not None
    ]
    if facts:
        root.add(escape(" · ".join(facts)))
    for citation in (answer.get("citations") or [])[:MAX_LIST_ITEMS]:
        if isinstance(citation, Mapping):
            where = citation.get("title") or citation.get("source") or citation.get("url") or ""
            page = f" p.{citation['page']}" if citation.get("page") else ""
            root.add(f"[{citation.get('n', '?')}] {_short(where, 80)}{page}")
    return root


def print_tree(events: Iterable[RunStarted | StepEvent] | RunTrace, console: Console | None = None) -> None:
    """Print a run's steps as a tree: a stored ``RunTrace`` (with its answer), or a list of events."""
    console = console or Console()
    if isinstance(events, RunTrace):
        trace = events
        console.print(
            _header(RunStarted(run_id=trace.run_id, thread_id=trace.thread_id, question=trace.question))
        )
        for step in trace.steps:
            console.print(step_tree(step))
        if trace.finished:
            console.print(_answer_tree(trace))
        return
    for event in events:
        console.print(_header(event) if isinstance(event, RunStarted) else step_tree(event))


def _header(header: RunStarted) -> str:
    thread = f"  thread {escape(header.thread_id)}" if header.thread_id else ""
    return f"[bold]run {escape(header.run_id)}[/]{thread}\n[italic]{escape(header.question)}[/]"


class LiveTreePrinter:
    """A ``TraceSink`` printing each step the moment its node finishes."""

    def __init__(self, console: Console | None = None, *, show_answer: bool = True) -> None:
        self.console = console or Console()
        self.show_answer = show_answer

    def on_run_started(self, header: RunStarted) -> None:
        self.console.print(_header(header))

    def on_step(self, step: StepEvent) -> None:
        self.console.print(step_tree(step))

    def on_run_finished(self, trace: RunTrace) -> None:
        if self.show_answer or trace.error:
            self.console.print(_answer_tree(trace))
