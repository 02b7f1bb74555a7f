"""The typed result of one question: the answer text, its numbered sources and how it was reached.

``ragpilot ask --json`` prints ``Answer.model_dump(mode="json")``; the HTTP API returns the same object.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from core.vocabulary import CragGrade, Route, SupportLabel


class Citation(BaseModel):
    """One numbered source: ``[n]`` in the answer text points here."""

    n: int = Field(description="the number used inline in the answer, 1-based")
    chunk_id: str
    doc_id: str
    source: str = ""
    title: str = ""
    page: int | None = None
    url: str | None = Field(None, description="set for web results")
    origin: Literal["kb", "web"] = "kb"


class SupportVerdict(BaseModel):
    """Self-RAG IsSup for one answer sentence, judged against the passages it cites."""

    sentence: str
    citations: list[int] = Field(default_factory=list)
    verdict: SupportLabel = Field(
        description="fully / partially / not supported, as the judge found; 'stated' when no judge was "
        "asked and the cited passages hold the sentence's numbers and most of its words (checked by code); "
        "'unchecked' when neither could be established"
    )
    removed: bool = Field(False, description="dropped from the answer because it stayed unsupported")
    trimmed: bool = Field(
        False, description="left out of the answer: other sentences state the short answer, this one does not"
    )


class Answer(BaseModel):
    """Everything a caller needs to show, cite and explain one answer."""

    question: str
    answer: str = Field(description="the checked, cited sentences (or the refusal text)")
    short_answer: str = Field(
        "",
        description="the entity, number, date, yes/no or short phrase asked for, when the kept "
        "sentences or the passages they cite state it; empty for refusals and direct replies",
    )
    citations: list[Citation] = Field(default_factory=list)
    route: Route | None = None
    route_confidence: float | None = None
    crag_grade: CragGrade | None = None
    crag_action: str | None = Field(
        None, description="what CRAG did: refine, web_search, refine_and_web, ..."
    )
    refused: bool = False
    refusal_reason: str | None = None
    partial: bool = Field(
        False, description="the question's budget ran out: this is the answer as far as it got"
    )
    budget_exhausted: str | None = Field(None, description='the limit reached, e.g. "llm_calls: 20 of 20"')
    support: list[SupportVerdict] = Field(default_factory=list)
    answers_question: bool | None = Field(None, description="Self-RAG IsUse; None when not judged")
    queries: list[str] = Field(default_factory=list, description="every search query issued for this answer")
    llm_calls: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    timings: dict[str, float] = Field(default_factory=dict, description="milliseconds per node (summed)")
    total_ms: float = 0.0
    run_id: str
    thread_id: str | None = None
    standalone_question: str | None = None

    def shown_text(self) -> str:
        """What a reader sees first: the short answer on its own line, then the cited sentences."""
        if self.short_answer and self.short_answer.strip() != self.answer.strip():
            return f"{self.short_answer}\n{self.answer}".strip()
        return self.answer.strip()

    def readable_text(self) -> str:
        """The short answer on its own line, the cited sentences, then the numbered sources (title,
        location, page or URL) and notes on what was not verified or ran out of budget: what the CLI
        prints and what a plain chat client shows."""
        lines = [self.short_answer, ""] if self.short_answer else []
        lines.append(self.answer.strip())
        if self.citations:
            lines += ["", "Sources:"]
            for citation in self.citations:
                where = citation.url or citation.source
                page = f", p.{citation.page}" if citation.page is not None else ""
                title = citation.title or citation.doc_id
                lines.append(f"  [{citation.n}] {title} — {where}{page}")
        shown = [v for v in self.support if not v.removed and not v.trimmed]
        flagged = [v for v in shown if v.verdict in ("partially", "unchecked")]
        removed = [v for v in self.support if v.removed]
        if removed:
            lines += ["", f"({len(removed)} unsupported sentence(s) removed from the answer)"]
        if flagged:
            lines += ["", f"(not fully verified against the sources: {len(flagged)} sentence(s))"]
        if self.budget_exhausted:
            what = "partial answer" if self.partial else "stopped"
            lines += ["", f"({what}: the question's budget ran out — {self.budget_exhausted})"]
        return "\n".join(lines)
