"""Read the question once: the facts every later step needs, as one typed value in the state.

``start_turn`` reads the user's message; ``contextualize`` reads the standalone question it writes for a
follow-up. No other node parses the question: they read ``state["question_facts"]``. What is read here
(each rule with its own test table in ``tests/graphs``):

- ``constraints``: the years and Chinese ordinals an answer must hold for (``_constraints``);
- ``excluded`` / ``search_text``: what the question asks for something other than, and the question
  without it (``_exclusions``);
- ``asks_for_more``: the user's message asks for another item or more of it (so the previous turn's
  passages will not do);
- ``names_documents`` / ``time_sensitive``: it names the user's documents, or a given year or "latest"
  (the model's memory is no source for either: ``classifier.signals``);
- ``is_question`` / ``message_is_question``: the standalone question, and the user's own message, are
  questions at all (not thanks or a greeting);
- ``chinese_script``: the script of a Chinese message (``tools.chinese_script``), which the answer is
  written in: a question asked in Traditional Chinese is answered in Traditional Chinese. A message
  with no character that only one script writes (高英是哪位皇帝的皇后？) keeps the conversation's script.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from graphs.rag.classifier.signals import asks_time_sensitive_fact, mentions_documents
from graphs.rag.nodes._constraints import question_constraints
from graphs.rag.nodes._exclusions import asks_for_more, excluded_items, without_exclusions
from graphs.rag.nodes._short_answer import asks_yes_no
from tools.chinese_script import ChineseScript, chinese_script, to_traditional
from tools.knowledge_base.text_units import detect_language

_QUESTION_WORDS = re.compile(
    r"^\s*(who|whom|whose|what|which|when|where|why|how|is|are|was|were|do|does|did|can|could|will|"
    r"would|should|and|also)\b|[?？]\s*$|吗|呢|什么|哪|几|多少|谁|怎么|为什么|是否",
    re.IGNORECASE,
)


def is_a_question(message: str) -> bool:
    """A question (not thanks or a greeting): asked with a question word or a question mark."""
    return bool(_QUESTION_WORDS.search(message))


def question_language(text: str) -> str:
    """'zh' for Chinese questions, else 'en' (the answer language)."""
    return "zh" if detect_language(text) == "zh" else "en"


class QuestionFacts(BaseModel):
    language: str
    constraints: list[str]
    excluded: list[str]
    search_text: str
    asks_for_more: bool
    names_documents: bool
    time_sensitive: bool
    is_question: bool
    message_is_question: bool
    asks_yes_no: bool = False  # answered by yes or no ("Are both …?", "…吗？"), offering no choice
    chinese_script: ChineseScript | None = None  # None: not Chinese, or no character tells the script


def read_question(
    standalone: str,
    message: str,
    previous_short_answer: str = "",
    previous_script: ChineseScript | None = None,
) -> QuestionFacts:
    """The facts of ``standalone`` (the question as the graph answers it), given the user's own
    ``message``, the previous turn's short answer (what "what else?" excludes) and the script the
    conversation was in so far."""
    return QuestionFacts(
        language=question_language(message),
        constraints=question_constraints(standalone),
        excluded=excluded_items(standalone, message, previous_short_answer),
        search_text=without_exclusions(standalone),
        asks_for_more=asks_for_more(message),
        names_documents=mentions_documents(standalone),
        time_sensitive=asks_time_sensitive_fact(standalone),
        is_question=is_a_question(standalone),
        message_is_question=is_a_question(message),
        asks_yes_no=asks_yes_no(standalone),
        chinese_script=_script_of(message, previous_script),
    )


def _script_of(message: str, previous_script: ChineseScript | None) -> ChineseScript | None:
    if question_language(message) != "zh":
        return None
    return chinese_script(message) or previous_script


def writes_traditional(state: Mapping[str, Any], enabled: bool) -> bool:
    """This turn's answer goes out in Traditional Chinese (``enabled``: ``graph.answer_in_users_script``)."""
    return enabled and facts_of(state).chinese_script == "traditional"


def in_users_script(text: str, state: Mapping[str, Any], enabled: bool) -> str:
    """``text`` in the script the user asked in: Traditional Chinese for a Traditional question (what the
    model wrote in Simplified is converted), otherwise as written."""
    return to_traditional(text) if writes_traditional(state, enabled) else text


def facts_of(state: Mapping[str, Any]) -> QuestionFacts:
    """The state's question facts; a state without them (built by hand, or an older checkpoint's) is
    read on the spot."""
    if state.get("question_facts"):
        return QuestionFacts.model_validate(state["question_facts"])
    standalone = state.get("standalone_question") or state["question"]
    return read_question(
        standalone, state.get("question") or standalone, state.get("previous_short_answer") or ""
    )
