"""IRCoT's own answer, when the reader of an iterative run says NOT_FOUND (``graph.answer_from_reasoning``).

IRCoT's loop ends on a reasoning sentence that states the answer ("So the answer is: X"), and the
method reads its answer from that chain. ragpilot writes the answer with a separate reader that may say
NOT_FOUND, and the 1.5B reader says it on multi-hop questions whose passages were all retrieved: the
bridge and the answer sit in different passages and neither states the answer to the question as
asked. Then, when code can check the chain's answer — X is copied word for word from a passage of the
context, and is not a bare yes/no that no single passage can state — the reasoning becomes the draft:
its sentences in order, the answer sentence citing the passage that states X. The draft goes through
the same checks as any other (uncited sentences are attributed by word overlap or dropped; the
support judge reads each sentence against the passages it cites).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_ANSWER_MARKER = r"\banswer is\b|答案是|答案为"
STATES_ANSWER = re.compile(_ANSWER_MARKER, re.IGNORECASE)
_STATED = re.compile(rf"(?:{_ANSWER_MARKER})\s*[:：]?\s*(?P<answer>.+)$", re.IGNORECASE | re.DOTALL)
_EDGES = " \t\n\"'“”‘’「」《》.,;:!?。，；：！？"
_YES_NO = {"yes", "no", "是", "否", "不是", "是的", "不", "没有", "有"}
MAX_ANSWER_CHARS = 80


def stated_answer(thought: str) -> str:
    """The X of "... the answer is: X" in one reasoning sentence ('' when it states none)."""
    found = _STATED.search(thought)
    return found.group("answer").strip(_EDGES) if found else ""


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def _states(passage: str, answer: str) -> bool:
    """Whether the passage holds the answer word for word (a Latin word only whole: "Art" is not in
    "Arthur"; Chinese has no word boundaries to hold to)."""
    pattern = re.escape(_folded(answer))
    return (
        re.search(rf"(?<!\w){pattern}(?!\w)" if answer.isascii() else pattern, _folded(passage)) is not None
    )


def draft_from_reasoning(reasoning: Sequence[str], passages: Mapping[int, str]) -> tuple[str, int] | None:
    """(the draft, the passage stating the answer) from IRCoT's reasoning, or None when its last
    sentence states no answer that a passage states word for word."""
    if not reasoning:
        return None
    answer = stated_answer(reasoning[-1])
    if not answer or len(answer) > MAX_ANSWER_CHARS or _folded(answer) in _YES_NO:
        return None
    stating = [n for n, text in passages.items() if _states(text, answer)]
    if not stating:
        return None
    sentences = [" ".join(thought.split()) for thought in reasoning]
    sentences[-1] = f"{sentences[-1].rstrip()} [{stating[0]}]"
    return " ".join(sentences), stating[0]
