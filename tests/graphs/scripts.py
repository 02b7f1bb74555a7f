"""Reply scripts for ``ScriptedChatModel`` and small helpers to run a graph turn."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from graphs.rag.classifier.base import ComplexityClassifier, RouteDecision

_PASSAGE = re.compile(r'<passage id="(\d+)"[^>]*>\n(.*?)\n</passage>', re.DOTALL)


def user_text(messages: list[BaseMessage]) -> str:
    return next(m.text for m in messages if isinstance(m, HumanMessage))


def passages_in(messages: list[BaseMessage]) -> dict[int, str]:
    """The numbered passages a prompt shows, by id."""
    return {int(n): text for n, text in _PASSAGE.findall(user_text(messages))}


def cite(sentence: str, fragment: str) -> Callable[[list[BaseMessage]], str]:
    """Reply ``sentence [n]`` where n is the passage containing ``fragment`` (NOT_FOUND if none)."""

    def reply(messages: list[BaseMessage]) -> str:
        for n, text in passages_in(messages).items():
            if fragment in text:
                return f"{sentence} [{n}]"
        return "NOT_FOUND"

    return reply


def cite_any(*pairs: tuple[str, str]) -> Callable[[list[BaseMessage]], str]:
    """Like ``cite`` for the first (sentence, fragment) pair whose fragment a passage holds."""

    def reply(messages: list[BaseMessage]) -> str:
        for sentence, fragment in pairs:
            answer = cite(sentence, fragment)(messages)
            if answer != "NOT_FOUND":
                return answer
        return "NOT_FOUND"

    return reply


def support(*verdicts: str, useful: bool = True, short: str = "") -> Callable[[list[BaseMessage]], str]:
    """A judge's reply: these verdicts for the first sentences, the last one repeated for any others
    (the real judge's schema requires one verdict per numbered sentence of the prompt), and ``short``
    as the proposed short answer."""

    def reply(messages: list[BaseMessage]) -> str:
        prompt = str(messages[-1].content)
        numbered = prompt.split("<sentences>", 1)[-1]
        count = max(len(re.findall(r"^\d+\. ", numbered, flags=re.MULTILINE)), 1)
        chosen = [verdicts[min(i, len(verdicts) - 1)] for i in range(count)]
        body: dict[str, object] = {f"sentence_{i}": v for i, v in enumerate(chosen, 1)}
        return json.dumps(body | {"answers_question": useful, "short_answer": short})

    return reply


ALL_FULLY = support("fully")
# graph.name_bridges asks the model to name the bridge on the iterative route: a copy that names nothing
# (rejected by the code's checks) leaves the reader's prompt as it was
NO_BRIDGE = '{"description": "", "name": ""}'


def numbered(template: str) -> Callable[[list[BaseMessage]], str]:
    """A reply that changes on every call: ``template.format(i=call number)``."""
    calls = [0]

    def reply(messages: list[BaseMessage]) -> str:
        calls[0] += 1
        return template.format(i=calls[0])

    return reply


class FixedClassifier(ComplexityClassifier):
    """A classifier that always gives the same verdict (routing tests)."""

    name = "fixed"

    def __init__(self, route: str, confidence: float = 0.95) -> None:
        self.decision = RouteDecision(route=route, confidence=confidence, reason=f"fixed: {route}")  # type: ignore[arg-type]

    def classify(self, question: str) -> RouteDecision:
        return self.decision


def run_turn(graph: Any, question: str, route: str | None = None, **configurable: Any) -> dict[str, Any]:
    """The final full state of one turn (``configurable`` goes to the run config)."""
    final: dict[str, Any] = {}
    request = {"question": question, "route_request": route}
    for state in graph.stream(request, {"configurable": configurable}, stream_mode="values"):
        final = state
    return final


def nodes_run(state: dict[str, Any]) -> list[str]:
    return [s["node"] for s in state["steps"]]


def step(state: dict[str, Any], node: str) -> dict[str, Any]:
    """The decision of the last run of ``node`` in this turn."""
    return [s for s in state["steps"] if s["node"] == node][-1]["decision"]
