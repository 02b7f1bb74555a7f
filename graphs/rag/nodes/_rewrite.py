"""The queries of the re-retrieval loops (``crag_retry``, ``usefulness_retry``).

Each of those nodes increments its own counter; the routing functions compare it with its bound.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from graphs.rag.nodes._llm import ask_text, one_line
from graphs.rag.nodes._passages import answer_language, language_name
from graphs.rag.nodes._question_facts import in_users_script, question_language
from graphs.rag.resources import Resources
from graphs.rag.state import RagState
from prompts import load_prompt
from tools.pinyin_names import with_passage_spellings


def retry_queries(state: RagState, config: RunnableConfig, resources: Resources, why: str) -> list[str]:
    """The rewritten query, and (``graph.retry_across_languages``) the question translated into each
    other language the last search found documents in: a multilingual embedder ranks passages in the
    question's language first, and BM25 shares no words across languages."""
    queries = [rewritten_query(state, config, resources, why)]
    if not resources.options.graph.retry_across_languages:
        return queries
    language = state.get("language", "en")
    for other in state.get("passage_languages") or []:
        if other != language:
            translation = translated_question(state, config, resources, other)
            if translation and translation not in queries:
                queries.append(translation)
    return queries


def question_translations(state: RagState) -> list[str]:
    """The latest retrieval's queries written in another language than the question: a retry's
    translations of it, against which passages in that language are judged (rerank, strips)."""
    language = state.get("language", "en")
    return [q for q in state.get("queries") or [] if question_language(q) != language]


def rewritten_query(state: RagState, config: RunnableConfig, resources: Resources, why: str) -> str:
    """One LLM call: a search query for the question that avoids the queries already tried."""
    question = state["standalone_question"]
    tried = state.get("queries_issued") or []
    match_script = resources.options.graph.answer_in_users_script
    user = (
        f"Question: {question}\nLanguage: {answer_language(state, match_script)}\n"
        f"Why a new query is needed: {why}\nQueries already tried: {'; '.join(tried) or '(none)'}"
    )
    query = one_line(ask_text(resources.llm, load_prompt("rewrite_query"), user, config)) or question
    return in_users_script(query, state, match_script)


def translated_question(
    state: RagState, config: RunnableConfig, resources: Resources, language: str
) -> str | None:
    """One LLM call: the question in ``language`` ('en' / 'zh'); None when the reply is not in it. The
    names the passages write in their own script are written so before translating (the prompt keeps
    names as they are), instead of leaving the model to guess the characters of a pinyin name."""
    system = load_prompt("translate_query").format(language=language_name(language))
    question = with_passage_spellings(state["standalone_question"], state.get("passage_spellings") or {})
    translation = one_line(ask_text(resources.llm, system, question, config))
    return translation if translation and question_language(translation) == language else None
