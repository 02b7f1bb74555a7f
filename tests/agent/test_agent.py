"""``Agent``: the Python entry point over the real graph and a real small knowledge base (scripted LLM)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent import Agent, Answer, build_graph
from agent.errors import ConfigError
from agent.providers.embedder_local_e5 import LocalE5Embedder
from agent.settings import load_settings
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker, build_knowledge_base
from tests.graphs.scripts import ALL_FULLY, cite
from tools.knowledge_base.knowledge_base import KnowledgeBase

QUESTION = "How many days of annual leave do Northwind employees get?"


@pytest.fixture(scope="module")
def knowledge_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    embedder = LocalE5Embedder(num_threads=2)
    kb = build_knowledge_base(load_settings(home=tmp_path_factory.mktemp("agent-kb")), embedder)
    yield kb
    kb.close()


@pytest.fixture
def scripted_agent(knowledge_base: KnowledgeBase, tmp_path: Path) -> tuple[Agent, ScriptedChatModel]:
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Full-time employees get 25 days of paid annual leave.", "25 days"),
            "check_support": ALL_FULLY,
            "contextualize_question": "How many unused annual leave days can be carried over?",
            "generate_direct": "Hello! Ask me about your documents.",
            "rewrite_query": "annual leave entitlement",
        }
    )
    settings = load_settings(home=tmp_path / "home")
    resources = Resources(
        settings,
        llm=llm,
        knowledge_base=knowledge_base,
        reranker=ScriptedReranker({"handbook::c0": 0.9, "handbook::c1": 0.7}, default=0.05),
        web=None,
        embedder=knowledge_base.embedder,
    )
    return Agent(settings, resources=resources), llm


def test_ask_returns_a_typed_answer_with_citations_timings_and_counts(scripted_agent) -> None:
    agent, _ = scripted_agent
    answer = agent.ask(QUESTION, route="single")
    assert isinstance(answer, Answer)
    assert "25 days" in answer.answer and not answer.refused
    assert [c.chunk_id for c in answer.citations] == ["handbook::c0"]
    assert answer.route == "single" and answer.crag_grade == "correct"
    assert answer.llm_calls == 2 and answer.llm_input_tokens == 20
    assert answer.queries == [QUESTION]
    assert set(answer.timings) >= {"retrieve", "refine_passages", "generate_answer", "check_support"}
    assert len(answer.run_id) == 32 and answer.thread_id is None
    assert [v.verdict for v in answer.support] == ["fully"]
    dumped = answer.model_dump(mode="json")
    assert {
        "answer",
        "citations",
        "route",
        "crag_action",
        "refused",
        "llm_calls",
        "run_id",
        "timings",
    } <= set(dumped)
    assert set(dumped["citations"][0]) >= {"n", "chunk_id", "doc_id", "source", "title", "page", "url"}


def test_stream_steps_yields_each_step_then_the_answer(scripted_agent) -> None:
    agent, _ = scripted_agent
    items = list(agent.stream_steps("Hello!", route="direct"))
    steps, answer = items[:-1], items[-1]
    assert [s["node"] for s in steps] == [
        "start_turn",
        "route_question",
        "generate_direct",
        "finalize_answer",
    ]
    assert all({"node", "started_at", "ms", "decision"} <= set(s) for s in steps)
    assert isinstance(answer, Answer) and answer.answer == "Hello! Ask me about your documents."


def test_threads_persist_in_sqlite_and_one_off_questions_leave_no_checkpoint(scripted_agent) -> None:
    agent, llm = scripted_agent
    agent.ask(QUESTION, route="single")
    checkpointer = agent.graph.checkpointer
    assert list(checkpointer.list(None)) == []  # no thread: nothing stored

    agent.ask(QUESTION, thread_id="th-1", route="single")
    follow_up = agent.ask("And how many can be carried over?", thread_id="th-1", route="single")
    assert agent.settings.threads_db.exists()
    assert follow_up.thread_id == "th-1"
    assert follow_up.standalone_question == "How many unused annual leave days can be carried over?"
    assert "contextualize_question" in llm.prompts_called()
    assert {c.config["configurable"]["thread_id"] for c in checkpointer.list(None)} == {"th-1"}


def test_bad_route_or_groups_are_config_errors(scripted_agent) -> None:
    agent, _ = scripted_agent
    with pytest.raises(ConfigError, match="route must be one of"):
        agent.ask(QUESTION, route="fastest")
    with pytest.raises(ConfigError, match="groups"):
        agent.ask(QUESTION, groups=[])


def test_groups_are_passed_as_the_run_identity(scripted_agent) -> None:
    agent, _ = scripted_agent
    steps = list(agent.stream_steps(QUESTION, route="single", groups=["sales"]))
    retrieve = [s for s in steps if isinstance(s, dict) and s.get("node") == "retrieve"][0]
    assert retrieve["decision"]["groups"] == ["sales", "public"]  # the caller's groups, plus public


def test_package_exports_are_lazy_and_complete() -> None:
    import agent as package

    assert package.build_graph is build_graph
    assert {"Agent", "Answer", "Citation", "Settings", "load_settings", "build_graph"} <= set(package.__all__)
