"""The HTTP API's request and response bodies (validated; identity is never part of a body)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.settings import QuestionBudget
from core.vocabulary import RouteRequest

THREAD_ID_PATTERN = r"^[A-Za-z0-9_\-]{1,64}$"


class AskRequest(BaseModel):
    """One question, optionally continuing a thread. ACL groups come from the API key, not from here."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    thread_id: str | None = Field(
        None, pattern=THREAD_ID_PATTERN, description="continue this thread; a new one is started when absent"
    )
    route: RouteRequest = "auto"
    budget: QuestionBudget | None = Field(
        None,
        description="this question's limits (seconds, llm_calls, llm_tokens); each is capped at the "
        "server's own graph.budget, which also applies to limits left out",
    )

    @field_validator("question")
    @classmethod
    def _not_blank(cls, question: str) -> str:
        if not question.strip():
            raise ValueError("question must not be blank")
        return question.strip()


class ThreadTurnOut(BaseModel):
    question: str
    answer: str | None = None


class ThreadOut(BaseModel):
    thread_id: str
    updated_at: str
    turns: list[ThreadTurnOut]
    last_citations: list[dict] = Field(default_factory=list)


class IngestedFile(BaseModel):
    filename: str
    status: Literal["ingested", "unchanged", "failed"]
    chunks: int = 0
    error: str | None = None


class IngestOut(BaseModel):
    acl: list[str]
    files: list[IngestedFile]


class HealthOut(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    llm: str
    embedder: str
    agent_loaded: bool
