"""A re-retrieval also searches in the other language the knowledge base holds (graph.retry_across_languages).

A question asked in Chinese about a fact that only the English handbook states ("远程办公每周几天？") is
ranked below every Chinese passage by a multilingual embedder, and BM25 shares no words with it: the
retry translates the question and reranks each passage against the wording in its own language."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from graphs.rag.nodes._rewrite import retry_queries
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, FixedClassifier, cite, nodes_run, passages_in, run_turn, step
from tools.knowledge_base.records import Hit

QUESTION = "远程办公每周可以几天？"  # only the English handbook answers it
TRANSLATION = "How many days per week can employees work from home?"
ACROSS = {"retry_across_languages": True}  # the default; the graph tests' fixture turns it off


def english_reader(query: str, hit: Hit) -> float:
    """A reranker that, like the offline one, scores a passage high only against a query in its language."""
    return 0.9 if query.isascii() and "Remote work" in hit.text else 0.05


def chat(**replies: Any) -> ScriptedChatModel:
    return ScriptedChatModel(
        replies={
            "rewrite_query": "远程办公 天数",
            "translate_query": TRANSLATION,
            "generate_answer": cite("员工每周最多可以在家办公三天。", "Remote work"),
            "check_support": ALL_FULLY,
            **replies,
        }
    )


def test_a_question_about_a_document_in_the_other_language_is_answered_after_a_translated_retry(
    make_graph,
) -> None:
    llm = chat()
    graph, _ = make_graph(llm, reranker=ScriptedReranker(english_reader), web=None, graph=ACROSS)
    state = run_turn(graph, QUESTION, route="single")
    assert nodes_run(state)[:6] == [
        "start_turn", "route_question", "transform_query", "retrieve", "grade_retrieval", "crag_retry",
    ]  # fmt: skip
    assert step(state, "crag_retry")["queries"] == ["远程办公 天数", TRANSLATION]
    assert step(state, "grade_retrieval")["grade"] == "correct"
    assert not state["refused"] and "三天" in state["answer"]
    assert state["citations"][0]["chunk_id"] == "handbook::c2"  # the remote-work passage


def test_with_the_switch_off_the_same_question_is_refused(make_graph) -> None:
    llm = chat()
    graph, _ = make_graph(
        llm, reranker=ScriptedReranker(english_reader), web=None, graph={"retry_across_languages": False}
    )
    state = run_turn(graph, QUESTION, route="single")
    assert step(state, "crag_retry")["queries"] == ["远程办公 天数"]
    assert state["refused"] and "translate_query" not in llm.prompts_called()


def test_a_translation_that_stays_in_the_question_language_is_not_searched(make_graph) -> None:
    # the model answered in Chinese instead of translating: searching it again would add nothing
    llm = chat(translate_query="员工每周可以远程办公三天。")
    graph, _ = make_graph(llm, reranker=ScriptedReranker(english_reader), web=None, graph=ACROSS)
    state = run_turn(graph, QUESTION, route="single")
    assert step(state, "crag_retry")["queries"] == ["远程办公 天数"]
    assert state["refused"]


def one_language_state(language: str, found_in: list[str]) -> dict[str, Any]:
    return {"standalone_question": QUESTION, "language": language, "passage_languages": found_in}


def test_a_search_that_found_only_the_question_language_is_retried_without_translation(make_graph) -> None:
    llm = chat()
    graph, settings = make_graph(llm, web=None, graph=ACROSS)
    from graphs.rag.resources import Resources

    resources = Resources(settings, llm=llm)
    for found_in in (["zh"], []):
        assert retry_queries(one_language_state("zh", found_in), {}, resources, "why") == ["远程办公 天数"]
    assert llm.prompts_called() == ["rewrite_query", "rewrite_query"]


def middling_then_english(query: str, hit: Hit) -> float:
    """Every passage scores between CRAG's bars against the Chinese question, except the remote-work
    passage, which scores low against it and high against its English translation."""
    if "Remote work" in hit.text:
        return 0.9 if query.isascii() else 0.05
    return 0.3


def reads_passage_one(messages: list[BaseMessage]) -> str:
    """A 1.5B reader answers from passage [1]: the remote-work passage must come first."""
    first = passages_in(messages).get(1, "")
    return "员工每周最多可以在家办公三天。 [1]" if "Remote work" in first else "NOT_FOUND"


def direct_question_graph(make_graph, **settings: Any) -> Any:
    """A graph whose router calls the question 'direct' and whose probe sends it to one pass."""
    llm = chat(generate_direct="大多数公司允许每周两天。", generate_answer=reads_passage_one)
    graph, _ = make_graph(
        llm,
        classifier=FixedClassifier("direct", 0.99),
        reranker=ScriptedReranker(middling_then_english),
        web=None,
        **settings,
    )
    return graph


def test_a_direct_questions_one_pass_may_still_retry_translated(make_graph) -> None:
    # The router answers short questions like this from memory; the probe's middling score sends it to
    # one retrieval pass, whose search found documents in English as well as Chinese.
    state = run_turn(direct_question_graph(make_graph, graph=ACROSS), QUESTION)
    assert step(state, "route_question")["direct_fallback"] is True
    assert step(state, "usefulness_retry")["queries"] == ["远程办公 天数", TRANSLATION]
    assert "generate_direct" not in nodes_run(state)
    assert "三天" in state["answer"] and state["citations"][0]["chunk_id"] == "handbook::c2"


def test_without_the_switch_the_direct_questions_pass_falls_back_to_memory(make_graph) -> None:
    state = run_turn(direct_question_graph(make_graph), QUESTION)
    assert nodes_run(state).count("retrieve") == 1 and nodes_run(state)[-2] == "generate_direct"
    assert state["answer"] == "大多数公司允许每周两天。" and not state["citations"]


def test_the_translation_is_asked_with_the_names_as_the_passages_write_them(make_graph) -> None:
    # "Qinghe" in pinyin, 清河 in the Chinese passages the search found (graph.names_across_scripts):
    # the model translates a question that already holds the characters instead of guessing them.
    llm = chat(translate_query="清河渡口的第一班渡船几点出发？")
    _, settings = make_graph(llm, web=None, graph=ACROSS)
    from graphs.rag.resources import Resources

    state = {
        "standalone_question": "When does the first ferry leave Qinghe?",
        "language": "en",
        "passage_languages": ["en", "zh"],
        "passage_spellings": {"Qinghe": "清河"},
    }
    queries = retry_queries(state, {}, Resources(settings, llm=llm), "why")
    assert queries == ["远程办公 天数", "清河渡口的第一班渡船几点出发？"]
    asked = dict(llm.calls)["translate_query"]
    assert asked[-1].content == "When does the first ferry leave 清河?"


def test_the_reader_is_shown_the_passages_spelling_of_a_name_beside_the_questions() -> None:
    from graphs.rag.nodes.generate_answer import answer_prompt

    state = {
        "standalone_question": "When does the first ferry leave Qinghe?",
        "language": "en",
        "context": [],
        "passage_spellings": {"Qinghe": "清河"},
    }
    _, user = answer_prompt(state, strict=False)
    assert user.count("Question: When does the first ferry leave Qinghe (清河)?") == 2
    _, user = answer_prompt({**state, "passage_spellings": {}}, strict=False)
    assert "(清河)" not in user
