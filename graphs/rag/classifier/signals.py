"""Question signals every router needs, whichever classifier decided: does it name the user's documents,
does it ask about a given year or the latest facts? The local classifier uses them as features; the
router node (``route_question``) uses them to overrule a ``direct`` verdict of any classifier.
"""

from __future__ import annotations

import re

DOCUMENT_REFERENCE = re.compile(
    r"\baccording to (the|our|my|this|these)\b"
    r"|\b(in|from|per) (the|our|my|this|these) (handbook|document|documents|docs|policy|policies|manual|"
    r"report|reports|file|files|pdf|notes|knowledge base|spreadsheet|contract|guide|wiki|slides)\b"
    r"|\b(our|my) (company|handbook|policy|policies|documents|docs|notes|files|team|product|contract)\b"
    r"|\b(the|this) (handbook|knowledge base|uploaded|attached)\b"
    r"|文档|手册|资料|文件|知识库|根据(公司|我们|这|该)|我们的|公司的|制度|政策",
    re.IGNORECASE,
)

# A year (1900-2099, not part of a longer number) or "latest / 最新": facts that change with time, which a
# model's memory is no source for. Kept out of words like "today" / "最近" that greetings use too.
TIME_SENSITIVE = re.compile(
    r"(?<![\d.])(19|20)\d{2}(?![\d.])|\b(latest|newest|most recent)\b|最新", re.IGNORECASE
)


def asks_time_sensitive_fact(question: str) -> bool:
    """True when the question is about a given year or the latest state of something ("我国2021年人口出生率")."""
    return bool(TIME_SENSITIVE.search(question))


def mentions_documents(question: str) -> bool:
    """True when the question names the user's documents ("according to the handbook", "文档里")."""
    return bool(DOCUMENT_REFERENCE.search(question))
