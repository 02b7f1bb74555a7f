"""The complexity-classifier interface (Adaptive-RAG): how much retrieval a question deserves."""

from __future__ import annotations

from abc import ABC, abstractmethod

from pydantic import BaseModel, Field

from core.vocabulary import Route


class RouteDecision(BaseModel):
    """A classifier's verdict on one question."""

    route: Route = Field(
        description="direct: no retrieval; single: one retrieval suffices; iterative: multi-hop"
    )
    confidence: float = Field(ge=0.0, le=1.0, description="how sure the classifier is of this route")
    reason: str = Field(description="plain-language why, for traces")


class ComplexityClassifier(ABC):
    """Labels a standalone question direct / single / iterative."""

    name: str

    @abstractmethod
    def classify(self, question: str) -> RouteDecision:
        """Return the route for ``question``; never raises on odd input (falls back to 'single')."""
