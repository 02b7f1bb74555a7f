"""What evaluation may call inside the graph, as public names: the checks and model calls its nodes make.

``bench/`` measures single checks (the constraint check, the answer gate's yes/no, the short answer's
"answers another question") outside a run. It imports them from here, never from the nodes' private
helpers, so reshaping ``nodes/`` changes this file's imports and not every benchmark's (an
import-linter contract keeps ``bench`` and ``agent`` off ``graphs.rag.nodes._*``).
"""

from __future__ import annotations

from graphs.rag.nodes._citations import word_share
from graphs.rag.nodes._constraints import CONSTRAINT_WINDOW, question_constraints, unmet_constraints
from graphs.rag.nodes._llm import (
    ask_structured,
    ask_with_first_token,
    probability_of_opening,
    probability_yes,
)
from graphs.rag.nodes._question_facts import QuestionFacts, is_a_question, read_question
from graphs.rag.nodes._short_answer import answers_another_question
from graphs.rag.nodes._step import count_llm_usage

__all__ = [
    "CONSTRAINT_WINDOW",
    "QuestionFacts",
    "is_a_question",
    "read_question",
    "answers_another_question",
    "ask_structured",
    "ask_with_first_token",
    "count_llm_usage",
    "probability_of_opening",
    "probability_yes",
    "question_constraints",
    "unmet_constraints",
    "word_share",
]
