"""The words the layers share, each defined once: routes, CRAG grades and actions, support labels."""

from __future__ import annotations

from typing import Literal, get_args

#: How much work a question gets (Adaptive-RAG): no retrieval, one retrieval, or iterative multi-hop.
Route = Literal["direct", "single", "iterative"]
#: What a caller may ask for: a route, or "auto" (the classifier decides).
RouteRequest = Literal["auto", "direct", "single", "iterative"]
ROUTES: tuple[Route, ...] = get_args(Route)
ROUTE_REQUESTS: tuple[RouteRequest, ...] = get_args(RouteRequest)

#: CRAG's grade of what retrieval returned, and what the graph does about it.
CragGrade = Literal["correct", "ambiguous", "incorrect"]
CragAction = Literal["refine", "web_search", "refine_and_web", "retry_kb", "refuse"]

#: Self-RAG's IsSup verdict on one sentence, as the judge gives it...
JudgedSupport = Literal["fully", "partially", "not"]
#: ...and as an answer reports it ("unchecked": the judge gave no verdict for that sentence; "stated":
#: no judge was asked, and code found the sentence's numbers and most of its words in what it cites).
SupportLabel = Literal["fully", "partially", "not", "stated", "unchecked"]
SUPPORT_LABELS: tuple[SupportLabel, ...] = get_args(SupportLabel)

#: The checks an answer draft passes before it is shown (``graphs/rag/answer_checks.py``); any of them
#: can be switched off with ``graph.checks_off`` to measure what it does (the ablation bench).
AnswerCheckName = Literal[
    "uncited",
    "unstated_numbers",
    "constraints",
    "exclusions",
    "support",
    "usefulness",
    "unconfirmed_answer",
    "unlikely_draft",
]
ANSWER_CHECK_NAMES: tuple[AnswerCheckName, ...] = get_args(AnswerCheckName)
