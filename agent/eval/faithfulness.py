"""Faithfulness measured from outside the graph: every sentence an answer shows is judged again against
the passages it cites, by the support judge's prompt (``prompts/check_support.md``) run as an evaluator.

The graph's own verdicts cannot be the measure: a path that does not judge sentences one by one
(``graph.support_verifier='features'``) reports none, and a path that does would grade itself. Here
both are graded by the same evaluator on what the user is shown. A sentence citing nothing, or whose
judgement fails, counts as not supported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from core.errors import StructuredOutputError
from graphs.rag.nodes.check_support import judgement_prompt, judgement_schema


class ShownSentence(BaseModel):
    """One sentence an answer shows, with the documents it cites."""

    sentence: str
    doc_ids: list[str]


class Faithfulness(BaseModel):
    sentences: int
    supported: int
    failed_judgements: int

    @property
    def share(self) -> float:
        return round(self.supported / self.sentences, 4) if self.sentences else 1.0


def judged_state(
    question: str, shown: list[ShownSentence], texts: Mapping[str, tuple[str, str]]
) -> dict[str, Any]:
    """The check's state for one answer: its shown sentences cite passages renumbered 1..k."""
    numbers: dict[str, int] = {}
    for s in shown:
        for doc_id in s.doc_ids:
            if doc_id in texts:
                numbers.setdefault(doc_id, len(numbers) + 1)
    context = [{"n": n, "title": texts[d][0], "text": texts[d][1]} for d, n in numbers.items()]
    draft = " ".join(
        s.sentence + "".join(f" [{numbers[d]}]" for d in s.doc_ids if d in numbers) for s in shown
    )
    return {"standalone_question": question, "answer_draft": draft, "context": context}


def judge_answer(
    llm: BaseChatModel, question: str, shown: list[ShownSentence], texts: Mapping[str, tuple[str, str]]
) -> tuple[int, int, bool]:
    """(sentences, fully supported, judgement failed) for one answer's shown sentences."""
    system, user, verdicts = judgement_prompt(judged_state(question, shown, texts))  # type: ignore[arg-type]
    schema = judgement_schema(len(verdicts))
    try:
        reply = llm.with_structured_output(schema).invoke([SystemMessage(system), HumanMessage(user)])
        given = (reply if isinstance(reply, BaseModel) else schema.model_validate(reply)).model_dump()
    except (StructuredOutputError, OutputParserException, ValidationError):
        return len(verdicts), 0, True
    supported = sum(
        1 for i, v in enumerate(verdicts, start=1) if v.citations and given[f"sentence_{i}"] == "fully"
    )
    return len(verdicts), supported, False


def measure_faithfulness(
    llm: BaseChatModel,
    answers: Iterable[tuple[str, list[ShownSentence]]],
    texts: Mapping[str, tuple[str, str]],
) -> Faithfulness:
    """Judge every (question, shown sentences) pair; ``texts`` maps a doc_id to its (title, text)."""
    sentences = supported = failed = 0
    for question, shown in answers:
        if not shown:
            continue
        n, ok, broken = judge_answer(llm, question, shown, texts)
        sentences, supported, failed = sentences + n, supported + ok, failed + int(broken)
    return Faithfulness(sentences=sentences, supported=supported, failed_judgements=failed)
