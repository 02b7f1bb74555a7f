"""The fast router: no LLM call. Named surface cues of the question plus its e5 query embedding, scored
by a multinomial logistic regression trained on a labelled mixture (``bench/train_router.py``).

The cues (greeting, arithmetic, comparison, bridge phrasing, named entities, ...) are transparent and
give the reason shown in traces; the embedding carries what regular expressions miss (style, topic,
Chinese phrasing). The trained weights live in ``models/router.json`` together with the figures they
were measured at; inference is plain numpy.

Whether a question names the user's documents is a feature here too (``signals.mentions_documents``).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError, model_validator

from core.errors import ConfigError, ModelAssetError
from core.vocabulary import Route
from graphs.rag.classifier.base import ComplexityClassifier, RouteDecision
from graphs.rag.classifier.signals import mentions_documents
from graphs.rag.lexicon import CJK
from tools.providers.embedder_base import Embedder

if TYPE_CHECKING:
    from core.settings import Settings

ROUTER_MODEL_PATH = Path(__file__).parent / "models" / "router.json"

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
# Arithmetic in words: an operator word between numbers ("48 divided by 6", "25乘以4", "15的20%").
_NUMBER = r"(\d+(\.\d+)?|[零一二三四五六七八九十百千万两]+)"
_WORDED_ARITHMETIC = re.compile(
    _NUMBER
    + r"\s*(plus|minus|times|multiplied by|divided by|over|to the power of|squared|cubed|percent of|%\s*of|"
    r"加上?|减去?|乘以?|除以?|的平方|的立方|的\d+次方|次方|的\d+(\.\d+)?%|的百分之)\s*" + _NUMBER + "?"
    r"|\b(square root|cube root|sum|product|average) of\s*\d"
    r"|(平方根|立方根)",
    re.IGNORECASE,
)
_GENERAL_TASK = re.compile(
    r"^\s*(translate|write (me )?(a|an) (poem|haiku|joke|story)|tell me a joke|spell)\b|^\s*(翻译|写一首|讲个笑话)",
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
_CJK_DESCRIBED_ENTITY = re.compile(r"(执导|主演|演唱|创办|创立|发明|提出|写|出演|所在|毕业于).{0,12}的")
_CAPITALISED_SPAN = re.compile(
    r"(?<![.?!]\s)(?<!^)\b[A-Z][\w'’-]+(?:\s+(?:of|the|de|von|and)?\s*[A-Z][\w'’-]+)*"
)
_QUESTION_WORD = re.compile(
    r"\b(what|when|where|who|whom|how|why|which|does|do|did|is|are|was|were|has|have|can|list)\b"
    r"|什么|多少|几|何时|哪|为什么|怎么|如何|是否|吗|谁",
    re.IGNORECASE,
)
_CONJUNCTION = re.compile(r"\b(and|both|as well as)\b|和|与|以及|及|并且", re.IGNORECASE)
_TITLE_MARKS = re.compile(r"《[^》]+》|\"[^\"]+\"|“[^”]+”")


def _entities(question: str) -> int:
    return len(_CAPITALISED_SPAN.findall(question))


def _words(question: str) -> int:
    # CJK has no spaces: count two characters as roughly one word.
    cjk = len(CJK.findall(question))
    return len(re.findall(r"[A-Za-z0-9]+", question)) + cjk // 2


@dataclass(frozen=True)
class Feature:
    """One named surface cue: a number (mostly 0/1) computed from the question text."""

    name: str
    value: Callable[[str], float]


def _cue(pattern: re.Pattern[str]) -> Callable[[str], float]:
    return lambda q: float(bool(pattern.search(q)))


FEATURES: tuple[Feature, ...] = (
    Feature("greeting or small talk", _cue(_GREETING)),
    Feature("arithmetic", _cue(_ARITHMETIC)),
    Feature("arithmetic in words", _cue(_WORDED_ARITHMETIC)),
    Feature("general task (translate, write)", _cue(_GENERAL_TASK)),
    Feature(
        "very short without a question word", lambda q: float(_words(q) <= 3 and not _QUESTION_WORD.search(q))
    ),
    Feature("names the user's documents", lambda q: float(mentions_documents(q))),
    Feature("asks a question", _cue(_QUESTION_WORD)),
    Feature(
        "comparison between options",
        lambda q: float(bool(_COMPARISON.search(q)) and bool(_CHOICE.search(q) or _CONJUNCTION.search(q))),
    ),
    Feature("bridge (an attribute of something described)", _cue(_BRIDGE)),
    Feature(
        "relative clause describing an entity",
        lambda q: float(bool(_RELATIVE_CLAUSE.search(q)) and _entities(q) >= 1),
    ),
    Feature("entity described by what it did (zh)", _cue(_CJK_DESCRIBED_ENTITY)),
    Feature("two or more named entities", lambda q: float(_entities(q) >= 2)),
    Feature(
        "entities joined by a conjunction",
        lambda q: float(_entities(q) >= 2 and bool(_CONJUNCTION.search(q))),
    ),
    Feature("quoted titles", lambda q: min(len(_TITLE_MARKS.findall(q)), 3) / 3.0),
    Feature("possessive chain (zh 的)", lambda q: min(q.count("的"), 4) / 4.0),
    Feature("length in words (log)", lambda q: math.log1p(_words(q)) / 4.0),
    Feature("named entities (count)", lambda q: min(_entities(q), 5) / 5.0),
    Feature("contains digits", lambda q: float(any(ch.isdigit() for ch in q))),
    Feature("Chinese", lambda q: float(bool(CJK.search(q)))),
)
FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in FEATURES)


def surface_features(question: str) -> np.ndarray:
    """The question's surface cues, in ``FEATURE_NAMES`` order."""
    return np.array([feature.value(question) for feature in FEATURES], dtype=np.float64)


class RouterWeights(BaseModel):
    """The trained router as stored in ``models/router.json`` (written by ``bench/train_router.py``)."""

    version: Literal[1] = 1
    labels: list[Route]
    feature_names: list[str]
    embedder: str | None = Field(None, description="the query-embedding model of the embedding features")
    embedding_dim: int = Field(0, ge=0)
    mean: list[float]
    scale: list[float]
    coef: list[list[float]] = Field(description="one row per label, one column per (scaled) input")
    intercept: list[float]
    auto_choice: Literal["local", "llm"] = Field(
        "local", description="what settings.graph.router='auto' uses, from bench/router.py's measurement"
    )
    trained_on: dict[str, int] = Field(default_factory=dict)
    measured: dict[str, object] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _shapes_agree(self) -> RouterWeights:
        inputs = len(self.feature_names) + self.embedding_dim
        if len(self.mean) != inputs or len(self.scale) != inputs:
            raise ValueError(f"mean/scale need {inputs} entries")
        if len(self.coef) != len(self.labels) or any(len(row) != inputs for row in self.coef):
            raise ValueError(f"coef must be {len(self.labels)} x {inputs}")
        if len(self.intercept) != len(self.labels):
            raise ValueError("intercept needs one entry per label")
        return self


def load_router_weights(path: Path = ROUTER_MODEL_PATH) -> RouterWeights:
    """Read and validate the trained router; ModelAssetError names the file when it is missing or bad."""
    try:
        weights = RouterWeights.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelAssetError(
            f"router weights {path}: cannot be read ({exc.strerror}); run bench/train_router.py"
        ) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise ModelAssetError(f"router weights {path}: invalid at {where}: {first['msg']}") from None
    if tuple(weights.feature_names) != FEATURE_NAMES:
        raise ModelAssetError(
            f"router weights {path}: trained on other surface features than graphs/rag/classifier/local.py "
            "computes; retrain with bench/train_router.py"
        )
    return weights


class FeatureComplexityClassifier(ComplexityClassifier):
    """No-LLM router: surface cues (+ the e5 query embedding when the weights use it) through the trained
    logistic regression. About 0.1 ms without the embedding; one query embedding (≈15-50 ms) with it."""

    name = "local-trained"

    def __init__(
        self,
        embedder: Embedder | Callable[[], Embedder],
        weights: RouterWeights | None = None,
    ) -> None:
        """``embedder`` (or a zero-argument factory of one, called on first use) must be the model the
        weights were trained with (``from_settings`` passes the process's multilingual-e5)."""
        self.weights = weights or load_router_weights()
        self._mean = np.asarray(self.weights.mean)
        self._scale = np.asarray(self.weights.scale)
        self._coef = np.asarray(self.weights.coef)
        self._intercept = np.asarray(self.weights.intercept)
        self._embedder_source = embedder
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> FeatureComplexityClassifier:
        """The classifier with the process's shared e5 embedder when the knowledge base uses it."""

        def embedder() -> Embedder:
            from tools.providers.embedder_factory import get_local_e5_embedder

            return get_local_e5_embedder(settings)

        return cls(embedder=embedder)

    @property
    def uses_embedding(self) -> bool:
        return self.weights.embedding_dim > 0

    def _query_embedding(self, question: str) -> np.ndarray:
        with self._lock:
            if self._embedder is None:
                source = self._embedder_source
                self._embedder = source if isinstance(source, Embedder) else source()
                if (
                    self._embedder.name != self.weights.embedder
                    or self._embedder.dim != self.weights.embedding_dim
                ):
                    raise ConfigError(
                        f"the router was trained with {self.weights.embedder} embeddings "
                        f"({self.weights.embedding_dim}-d); got {self._embedder.name} ({self._embedder.dim}-d)"
                    )
        return np.asarray(self._embedder.embed_query(question), dtype=np.float64)

    def inputs(self, question: str) -> np.ndarray:
        """The model's input row for ``question``: surface cues, then the query embedding if used."""
        cues = surface_features(question)
        if not self.uses_embedding:
            return cues
        return np.concatenate([cues, self._query_embedding(question)])

    def probabilities(self, question: str) -> dict[str, float]:
        """Route probabilities (softmax of the logistic regression)."""
        return self._probabilities(self._scaled(question))

    def _scaled(self, question: str) -> np.ndarray:
        return (self.inputs(question) - self._mean) / self._scale

    def _probabilities(self, scaled: np.ndarray) -> dict[str, float]:
        logits = self._coef @ scaled + self._intercept
        exp = np.exp(logits - logits.max())
        probs = exp / exp.sum()
        return dict(zip(self.weights.labels, (float(p) for p in probs), strict=True))

    def classify(self, question: str) -> RouteDecision:
        if not question.strip():
            return RouteDecision(
                route="single", confidence=0.0, reason="empty question: default to one retrieval"
            )
        scaled = self._scaled(question)
        probs = self._probabilities(scaled)
        if mentions_documents(question):
            # The user asked about their documents: never answer from memory.
            probs.pop("direct", None)
            total = sum(probs.values())
            probs = {route: p / total for route, p in probs.items()}
        route = max(probs, key=lambda r: probs[r])
        return RouteDecision(
            route=route,  # type: ignore[arg-type]
            confidence=round(probs[route], 3),
            reason=self._explain(question, scaled, route),
        )

    def _explain(self, question: str, scaled: np.ndarray, route: str) -> str:
        """The cues that pushed hardest toward ``route`` (their part of its logit), for traces."""
        row = self.weights.labels.index(route)  # type: ignore[arg-type]
        n = len(FEATURE_NAMES)
        cues = surface_features(question)
        contributions = self._coef[row, :n] * scaled[:n]
        fired = [
            (contributions[i], FEATURE_NAMES[i]) for i in range(n) if cues[i] > 0 and contributions[i] > 0.05
        ]
        fired.sort(reverse=True)
        parts = [f"{name} (+{value:.1f})" for value, name in fired[:3]]
        if self.uses_embedding:
            parts.append(f"question embedding ({float(self._coef[row, n:] @ scaled[n:]):+.1f})")
        return f"{route}: " + ("; ".join(parts) if parts else "no strong cue")
