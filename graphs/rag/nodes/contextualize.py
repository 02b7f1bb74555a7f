"""Follow-up → standalone question, using the thread's history (issue 5's chat relies on this).

A reference into the list the previous answer gave ("the second one", "那第二部") is resolved without
the model (``_list_reference``); anything else is rewritten by one LLM call. When that call hands a
Chinese follow-up back unchanged with its pronoun still in it, one more call names the referent
(``graph.name_pronoun_referents``)."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._citations import without_citations
from graphs.rag.nodes._list_reference import resolve_list_reference
from graphs.rag.nodes._llm import ask_text, one_line
from graphs.rag.nodes._passages import neutralise_delimiters
from graphs.rag.nodes._question_facts import facts_of, in_users_script, read_question
from graphs.rag.nodes._step import records_step
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt

# A history message longer than this is cut: the rewrite needs the topic, not the whole answer.
HISTORY_MESSAGE_CHARS = 600

# A Chinese third-person pronoun, not the same character inside a word that means something else
# (其他 / 其它 "other", 吉他 "guitar", 他人 "other people", 他乡, 他国, 排他, 利他, 他日).
_CHINESE_PRONOUN = re.compile(r"(?<![其吉排利])(?:他们|她们|它们|他|她|它)(?![人乡国日])")
# A name longer than this is a sentence, not a name.
REFERENT_CHARS = 40


def earlier_turns(messages: list[BaseMessage], turns: int) -> list[BaseMessage]:
    """The conversation before the current question, at most ``turns`` user/assistant pairs."""
    history: list[BaseMessage] = [m for m in messages[:-1] if isinstance(m, HumanMessage | AIMessage)]
    return history[-2 * turns :] if turns else []


def format_history(history: list[BaseMessage]) -> str:
    lines = []
    for message in history:
        speaker = "User" if isinstance(message, HumanMessage) else "Assistant"
        text = message.text.strip().replace("\n", " ")
        if len(text) > HISTORY_MESSAGE_CHARS:
            text = text[:HISTORY_MESSAGE_CHARS] + " …"
        lines.append(f"{speaker}: {neutralise_delimiters(text)}")
    return "\n".join(lines)


@records_step
def contextualize(state: RagState, config: RunnableConfig, *, resources: Resources) -> dict[str, Any]:
    """Rewrite the question into a standalone one (one LLM call, none for a list reference); keep it
    unchanged if the reply is empty."""
    question = state["question"]
    history = earlier_turns(list(state.get("messages") or []), resources.options.history_turns)
    if not history:
        return {
            **standalone_with_facts(state, question),
            "decision": {"rewritten": False, "reason": "no history"},
        }
    last_answer = next((str(m.text) for m in reversed(history) if isinstance(m, AIMessage)), "")
    if resolved := resolve_list_reference(question, last_answer):
        decision = {"rewritten": True, "standalone_question": resolved, "list_reference": "resolved"}
        return {**standalone_with_facts(state, resolved), "decision": decision}
    user = (
        f"Conversation so far:\n<conversation>\n{format_history(history)}\n</conversation>\n\n"
        f"Latest message: {question}\n\nStandalone question:"
    )
    rewritten = one_line(ask_text(resources.llm, load_prompt("contextualize_question"), user, config), 500)
    earlier = [str(m.text) for m in history if isinstance(m, HumanMessage)]
    fallback = None
    if repeats_an_earlier_question(rewritten, earlier, question):
        # The small model often hands back the previous question ("What else did that author write?"
        # -> "Who wrote Fusion at Scale?"): keep the latest message and name what it refers to.
        fallback, rewritten = "the rewrite repeated an earlier question", with_referent(question, history)
    elif resources.options.graph.name_pronoun_referents and (
        named := name_kept_pronoun(rewritten or question, question, history, resources, config)
    ):
        fallback, rewritten = "the rewrite kept a pronoun: named what it stands for", named
    # A Traditional Chinese message gets a Traditional question: retrieval matches the user's documents.
    standalone = in_users_script(rewritten or question, state, resources.options.graph.answer_in_users_script)
    return {
        **standalone_with_facts(state, standalone),
        "decision": {
            "rewritten": standalone != question,
            "standalone_question": standalone,
            "history_messages": len(history),
            **({"fallback": fallback} if fallback else {}),
        },
    }


def standalone_with_facts(state: RagState, standalone: str) -> dict[str, Any]:
    """The standalone question and its facts, read once here for every later node."""
    # start_turn's facts hold the conversation's script (inherited when the message does not tell)
    facts = read_question(
        standalone,
        state["question"],
        state.get("previous_short_answer") or "",
        facts_of(state).chinese_script,
    )
    return {"standalone_question": standalone, "question_facts": facts.model_dump()}


def _normalised(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def repeats_an_earlier_question(rewritten: str, earlier_questions: list[str], latest: str) -> bool:
    """The rewrite is one of the earlier questions again, while the latest message is not."""
    if not rewritten:
        return False
    again = _normalised(rewritten)
    return again != _normalised(latest) and any(again == _normalised(q) for q in earlier_questions)


def with_referent(question: str, history: list[BaseMessage]) -> str:
    """The latest message followed by the last exchange it refers to, on one line."""
    last_question = next((m.text for m in reversed(history) if isinstance(m, HumanMessage)), "")
    last_answer = next((m.text for m in reversed(history) if isinstance(m, AIMessage)), "")
    referent = " ".join(f"{last_question} {without_citations(last_answer)}".split())[:HISTORY_MESSAGE_CHARS]
    return f"{question} (context: {referent})" if referent else question


def kept_pronoun(rewritten: str, question: str) -> re.Match[str] | None:
    """The Chinese pronoun of a message the rewrite handed back unchanged (the small model's usual slip
    with "它…？"), or None."""
    if _normalised(rewritten) != _normalised(question):
        return None
    return _CHINESE_PRONOUN.search(question)


def name_kept_pronoun(
    rewritten: str,
    question: str,
    history: list[BaseMessage],
    resources: Resources,
    config: RunnableConfig,
) -> str | None:
    """The message with the pronoun the rewrite kept replaced by the name the model says it stands for
    (one LLM call), or None when no pronoun was kept or the reply names nothing the conversation wrote."""
    if not (pronoun := kept_pronoun(rewritten, question)):
        return None
    user = (
        f"Conversation so far:\n<conversation>\n{format_history(history)}\n</conversation>\n\n"
        f'Latest message: {question}\n\nWhat does "{pronoun.group()}" refer to?'
    )
    name = one_line(ask_text(resources.llm, load_prompt("name_pronoun_referent"), user, config), 200)
    conversation = " ".join(without_citations(str(m.text)) for m in history)
    return with_named_referent(question, pronoun, name, conversation)


def with_named_referent(question: str, pronoun: re.Match[str], name: str, conversation: str) -> str | None:
    """``question`` with ``name`` in the pronoun's place, or None unless ``name`` is a short name the
    conversation writes (a reply that is a sentence, or a name made up, changes nothing)."""
    name = name.strip().rstrip("。.，,").strip("\"“”'「」")
    if not name or len(name) > REFERENT_CHARS or name not in conversation or pronoun.group() in name:
        return None
    return question[: pronoun.start()] + name + question[pronoun.end() :]
