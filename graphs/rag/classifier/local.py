"""A fast classifier with no LLM call: named, weighted surface features of the question.

Each feature adds its weight to one route's score; the route with the highest score wins and the
softmax of the scores gives the confidence. The features that fired are the reason. This is a
transparent starting point (English and Chinese cues); it can be re-weighted or replaced by a
trained model behind the same interface.

``mentions_documents`` is exported for the router: a question that names the user's documents
("according to the handbook", "文档里") must be answered from them, never directly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from graphs.rag.classifier.base import ComplexityClassifier, RouteDecision

_GREETING = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|good (morning|afternoon|evening)|how are you|bye|goodbye)\b"
    r"|^\s*(你好|您好|谢谢|多谢|早上好|晚上好|再见|嗨)",
    re.IGNORECASE,
)
_ARITHMETIC = re.compile(
    r"^\s*(what is|what's|calculate|compute|how much is|计算|算一下)?\s*"
    r"[-+]?\d+(\.\d+)?(\s*[-+*/x×÷^]\s*[-+]?\d+(\.\d+)?)+\s*(=|\?|？|等于多少|是多少)?\s*[?？]?\s*$",
    re.IGNORECASE,
)
_GENERAL_TASK = re.compile(
    r"^\s*(translate|write (me )?(a|an) (poem|haiku|joke|story)|tell me a joke|spell)\b|^\s*(翻译|写一首|讲个笑话)",
    re.IGNORECASE,
)
_DOCUMENT_REFERENCE = re.compile(
    r"\baccording to (the|our|my|this|these)\b"
    r"|\b(in|from|per) (the|our|my|this|these) (handbook|document|documents|docs|policy|policies|manual|"
    r"report|reports|file|files|pdf|notes|knowledge base|spreadsheet|contract|guide|wiki|slides)\b"
    r"|\b(our|my) (company|handbook|policy|policies|documents|docs|notes|files|team|product|contract)\b"
    r"|\b(the|this) (handbook|knowledge base|uploaded|attached)\b"
    r"|文档|手册|资料|文件|知识库|根据(公司|我们|这|该)|我们的|公司的|制度|政策",
    re.IGNORECASE,
)
_COMPARISON = re.compile(
    r"\b(both|compare|compared|comparison|versus|vs\.?|difference between|differ|same|in common|"
    r"older|younger|earlier|later|first|larger|bigger|smaller|higher|lower|longer|shorter|taller|"
    r"more|fewer|less|closer|farther|further)\b"
    r"|比较|对比|哪个|哪一个|哪位|更早|更晚|更大|更小|更多|更少|更高|更长|谁先|都是|是否都|相同|区别|差异|还是",
    re.IGNORECASE,
)
_CHOICE = re.compile(r"\b(which|who|whether|or)\b|哪|谁|还是", re.IGNORECASE)
_BRIDGE = re.compile(
    r"\b(the|a|an)\s+\w+(\s+\w+)?\s+of\s+the\s+\w+(\s+\w+)*\s+(that|who|which|whose|where)\b"
    r"|\b(director|author|founder|father|mother|wife|husband|son|daughter|capital|creator|singer|performer|"
    r"producer|president|ceo|owner|headquarters|birthplace|spouse|composer|writer|star)\s+of\s+the\b"
    r"|的.{1,12}的.{0,12}(是谁|是什么|在哪|哪|多少|何时|什么时候)",
    re.IGNORECASE,
)
_RELATIVE_CLAUSE = re.compile(
    r"\b(the|a|an)\s+(\w+\s+){0,2}?(who|which|that|whose)\s+(\w+\s+)?(portrayed|played|wrote|directed|founded|"
    r"created|starred|sang|won|invented|owns|owned|led|built|designed|produced|married|born|is|was)\b",
    re.IGNORECASE,
)
_CAPITALISED_SPAN = re.compile(
    r"(?<![.?!]\s)(?<!^)\b[A-Z][\w'’-]+(?:\s+(?:of|the|de|von|and)?\s*[A-Z][\w'’-]+)*"
)
_QUESTION_WORD = re.compile(
    r"\b(what|when|where|who|whom|how|why|which|does|do|did|is|are|was|were|has|have|can|list)\b"
    r"|什么|多少|几|何时|哪|为什么|怎么|如何|是否|吗|谁",
    re.IGNORECASE,
)
_CONJUNCTION = re.compile(r"\b(and|both|as well as)\b|和|与|以及|及|并且", re.IGNORECASE)


def mentions_documents(question: str) -> bool:
    """True when the question names the user's documents ("according to the handbook", "文档里")."""
    return bool(_DOCUMENT_REFERENCE.search(question))


def _entities(question: str) -> int:
    return len(_CAPITALISED_SPAN.findall(question))


def _words(question: str) -> int:
    # CJK has no spaces: count two characters as roughly one word.
    cjk = len(re.findall(r"[\u4e00-\u9fff]", question))
    return len(re.findall(r"[A-Za-z0-9]+", question)) + cjk // 2


@dataclass(frozen=True)
class Feature:
    name: str
    route: str
    weight: float
    fires: Callable[[str], bool]


FEATURES: tuple[Feature, ...] = (
    Feature("greeting or small talk", "direct", 3.0, lambda q: bool(_GREETING.search(q))),
    Feature("arithmetic", "direct", 3.0, lambda q: bool(_ARITHMETIC.search(q))),
    Feature("general task (translate, write)", "direct", 2.0, lambda q: bool(_GENERAL_TASK.search(q))),
    Feature(
        "very short without a question word",
        "direct",
        0.8,
        lambda q: _words(q) <= 3 and not _QUESTION_WORD.search(q),
    ),
    Feature("names the user's documents", "single", 1.5, mentions_documents),
    Feature("asks a question", "single", 1.0, lambda q: bool(_QUESTION_WORD.search(q))),
    Feature(
        "comparison between options",
        "iterative",
        2.2,
        lambda q: bool(_COMPARISON.search(q)) and bool(_CHOICE.search(q) or _CONJUNCTION.search(q)),
    ),
    Feature(
        "bridge (an attribute of something described)", "iterative", 1.6, lambda q: bool(_BRIDGE.search(q))
    ),
    Feature(
        "relative clause describing an entity",
        "iterative",
        1.2,
        lambda q: bool(_RELATIVE_CLAUSE.search(q)) and _entities(q) >= 1,
    ),
    Feature("two or more named entities", "iterative", 0.8, lambda q: _entities(q) >= 2),
    Feature(
        "entities joined by a conjunction",
        "iterative",
        0.6,
        lambda q: _entities(q) >= 2 and bool(_CONJUNCTION.search(q)),
    ),
    Feature("long question (over 18 words)", "iterative", 0.6, lambda q: _words(q) > 18),
)

# Every question starts leaning to one retrieval: the safe default when no cue fires.
_PRIOR = {"direct": 0.0, "single": 0.5, "iterative": 0.0}


class FeatureComplexityClassifier(ComplexityClassifier):
    """No-LLM router over ``FEATURES``; about a tenth of a millisecond per question."""

    name = "local-features"

    def __init__(self, features: tuple[Feature, ...] = FEATURES) -> None:
        self.features = features

    def classify(self, question: str) -> RouteDecision:
        scores = dict(_PRIOR)
        fired: list[str] = []
        for feature in self.features:
            if feature.fires(question):
                scores[feature.route] += feature.weight
                fired.append(f"{feature.name} (+{feature.weight:g} {feature.route})")
        if mentions_documents(question):
            scores["direct"] = -math.inf  # the user asked about their documents: never answer from memory
        route = max(scores, key=lambda r: scores[r])
        finite = {r: s for r, s in scores.items() if s != -math.inf}
        total = sum(math.exp(s) for s in finite.values())
        confidence = math.exp(scores[route]) / total
        reason = "; ".join(fired) if fired else "no cue fired: default to one retrieval"
        return RouteDecision(route=route, confidence=round(confidence, 3), reason=reason)  # type: ignore[arg-type]
