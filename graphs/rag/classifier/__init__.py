"""Question-complexity classifiers for Adaptive-RAG routing: direct, single or iterative."""

from graphs.rag.classifier.base import ComplexityClassifier, RouteDecision

__all__ = ["ComplexityClassifier", "RouteDecision"]
