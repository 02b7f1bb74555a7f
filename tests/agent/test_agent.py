"""``Agent``: the Python entry point over the real graph and a real small knowledge base (scripted LLM)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent import Agent, Answer, build_graph
from agent.cli import app
from agent.run_loop import FinalAnswer, StepUpdate
from agent.tracing.store import TraceStore
from core.errors import ConfigError
from core.settings import load_settings
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker, build_knowledge_base
from tests.graphs.scripts import ALL_FULLY, cite
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.providers.embedder_factory import get_local_e5_embedder

QUESTION = "How many days of annual leave do Northwind employees get?"


@pytest.fixture(scope="module")
def knowledge_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    embedder = get_local_e5_embedder(load_settings())
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


def test_stream_yields_each_step_then_the_answer(scripted_agent) -> None:
    agent, _ = scripted_agent
    events = list(agent.stream("Hello!", route="direct"))
    steps = [e.step for e in events if isinstance(e, StepUpdate)]
    assert [s.node for s in steps] == [
        "start_turn",
        "route_question",
        "generate_direct",
        "finalize_answer",
    ]
    assert all(s.ms >= 0 and isinstance(s.decision, dict) for s in steps)
    assert isinstance(events[-1], FinalAnswer)
    assert events[-1].answer.answer == "Hello! Ask me about your documents."


def test_ask_on_a_thread_is_traced_for_ragpilot_trace_and_keeps_checkpoints_bounded(scripted_agent) -> None:
    agent, _ = scripted_agent
    answers = [agent.ask(QUESTION, thread_id="th-bounded", route="single") for _ in range(4)]

    replayed = TraceStore(agent.settings.traces_dir).load(answers[-1].run_id)
    assert replayed.answer is not None and replayed.answer["answer"] == answers[-1].answer
    assert [s.node for s in replayed.steps][:2] == ["start_turn", "contextualize"]
    shown = CliRunner().invoke(
        app, ["trace", answers[-1].run_id], env={"RAGPILOT_HOME": str(agent.settings.home)}
    )
    assert shown.exit_code == 0 and "retrieve" in shown.stdout
    kept = list(agent.graph.checkpointer.list({"configurable": {"thread_id": "th-bounded"}}))
    assert len(kept) <= agent.settings.chat.keep_checkpoints


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
    steps = [
        e.step for e in agent.stream(QUESTION, route="single", groups=["sales"]) if isinstance(e, StepUpdate)
    ]
    retrieve = [s for s in steps if s.node == "retrieve"][0]
    assert retrieve.decision["groups"] == ["sales", "public"]  # the caller's groups, plus public


def test_package_exports_are_lazy_and_complete() -> None:
    import agent as package

    assert package.build_graph is build_graph
    assert {"Agent", "Answer", "Citation", "Settings", "load_settings", "build_graph"} <= set(package.__all__)
