"""Turns of one thread over the real SQLite checkpointer: per-turn fields reset, history kept,
follow-ups rewritten, and the previous context reused when it still answers the question."""

from __future__ import annotations

from tests.graphs.helpers import ScriptedChatModel, ScriptedReranker
from tests.graphs.scripts import ALL_FULLY, cite, cite_any, nodes_run, run_turn, step, support, user_text


def test_second_turn_is_rewritten_resets_its_steps_and_reuses_the_previous_context(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Full-time employees get 25 days of annual leave.", "25 days"),
            "check_support": ALL_FULLY,
            "contextualize_question": "How many unused annual leave days can Northwind employees carry over?",
        }
    )
    reranker = ScriptedReranker({"handbook::c0": 0.9, "handbook::c1": 0.8}, default=0.05)
    graph, settings = make_graph(llm, reranker=reranker, checkpointer="settings")
    first = run_turn(
        graph, "How many days of annual leave do Northwind employees get?", route="single", thread_id="t1"
    )
    second = run_turn(graph, "And how many can I carry over?", route="single", thread_id="t1")

    assert settings.threads_db.exists()  # the thread lives in SQLite
    assert nodes_run(second)[:3] == ["start_turn", "contextualize", "route_question"]
    assert (
        second["standalone_question"]
        == "How many unused annual leave days can Northwind employees carry over?"
    )
    history = user_text(next(m for name, m in llm.calls if name == "contextualize_question"))
    assert "How many days of annual leave" in history and "25 days" in history

    # Per-turn fields start afresh; the conversation and the last context carry over.
    assert second["steps"][0]["node"] == "start_turn" and second["llm_calls"] == 3
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    assert second["previous_context"] == first["context"]
    assert step(second, "reuse_or_retrieve")["reuse"] is True
    assert "retrieve" not in nodes_run(second)
    assert second["citations"][0]["chunk_id"] == "handbook::c0"


def test_a_follow_up_about_new_material_retrieves_again(make_graph) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite_any(
                ("Hotel costs are capped at 150 euros per night.", "150 euros"),
                ("The Rotterdam office is open on weekdays.", "Rotterdam office"),
            ),
            "check_support": ALL_FULLY,
            "contextualize_question": "What is the hotel cost cap for Northwind travel?",
        }
    )

    def score(query: str, hit) -> float:  # the office passage answers office questions, c3 hotel ones
        wanted = {"handbook::c2": "office", "handbook::c3": "hotel"}.get(hit.chunk_id)
        return 0.9 if wanted and wanted in query.lower() else 0.1

    reranker = ScriptedReranker(score)
    graph, _ = make_graph(llm, reranker=reranker, checkpointer=InMemorySaver())
    run_turn(graph, "Where is the Rotterdam office?", route="single", thread_id="t2")
    second = run_turn(graph, "And the hotel cap?", route="single", thread_id="t2")
    assert step(second, "reuse_or_retrieve")["reuse"] is False
    assert "retrieve" in nodes_run(second)
    assert second["citations"][0]["chunk_id"] == "handbook::c3"


def _two_turns(make_graph, rewrite: str, follow_up: str):
    """Turn 1 about Maria Chen's project, then ``follow_up`` which the model rewrites as ``rewrite``."""
    from langgraph.checkpoint.memory import InMemorySaver

    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite_any(
                ("The Aurora project is led by Maria Chen.", "Aurora project is led by Maria Chen"),
                ("Maria Chen was born in Lisbon.", "born in Lisbon"),
            ),
            "check_support": ALL_FULLY,
            "contextualize_question": rewrite,
        }
    )
    reranker = ScriptedReranker({"projects::c0": 0.95}, default=0.1)
    graph, _ = make_graph(llm, reranker=reranker, checkpointer=InMemorySaver())
    run_turn(graph, "Who leads the Aurora project?", route="single", thread_id="t-more")
    return run_turn(graph, follow_up, route="single", thread_id="t-more"), llm


def test_a_follow_up_asking_what_else_retrieves_instead_of_reusing_the_last_passage(make_graph) -> None:
    second, _ = _two_turns(
        make_graph, "What else is known about Maria Chen?", "What else do we know about her?"
    )
    decision = step(second, "reuse_or_retrieve")
    assert decision["reuse"] is False and "something else or more" in decision["reason"]
    assert "retrieve" in nodes_run(second)


def test_a_follow_up_naming_a_year_the_last_passages_lack_retrieves(make_graph) -> None:
    second, _ = _two_turns(make_graph, "Who led the Aurora project in 2024?", "And in 2024?")
    assert step(second, "reuse_or_retrieve")["reason"].startswith("the follow-up asks about 2024")


def test_a_rewrite_that_hands_back_the_earlier_question_keeps_the_follow_up_and_its_referent(
    make_graph,
) -> None:
    second, _ = _two_turns(make_graph, "Who leads the Aurora project?", "Where was that person born?")
    decision = step(second, "contextualize")
    assert decision["fallback"] == "the rewrite repeated an earlier question"
    assert second["standalone_question"].startswith("Where was that person born? (context: Who leads")
    assert "Maria Chen" in second["standalone_question"] and "[1]" not in second["standalone_question"]


def test_the_second_one_is_the_second_item_the_previous_answer_listed_with_no_rewrite_call(
    make_graph,
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite_any(
                ("The Aurora project has two leads: Maria Chen and Tom Berg.", "Aurora project is led by"),
            ),
            "check_support": ALL_FULLY,
            "contextualize_question": "Where was Maria Chen born?",  # the small model's usual slip
        }
    )
    graph, _ = make_graph(
        llm, reranker=ScriptedReranker({"projects::c0": 0.95}, default=0.1), checkpointer=InMemorySaver()
    )
    run_turn(graph, "Who leads the Aurora project?", route="single", thread_id="t-list")
    second = run_turn(graph, "Where was the second one born?", route="single", thread_id="t-list")

    assert second["standalone_question"] == "Where was Tom Berg born?"
    assert step(second, "contextualize")["list_reference"] == "resolved"
    assert "contextualize_question" not in llm.prompts_called()


def _judge_naming(*names: str):
    """A judge calling every sentence supported, whose short answer is the first of ``names`` the
    answer sentences mention."""

    def reply(messages) -> str:
        sentences = str(messages[-1].content).split("<sentences>", 1)[-1]
        short = next((n for n in names if n in sentences), "")
        return support("fully", short=short)(messages)

    return reply


def test_what_else_answered_with_the_same_thing_again_is_written_again_then_refused(make_graph) -> None:
    # Follow-up benchmark en-22: "What other paper did Li Wei write?" after "Sparse Tricks" was answered
    # "Li Wei also wrote 'Sparse Tricks'": the thing the question excluded.
    from langgraph.checkpoint.memory import InMemorySaver

    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("The Aurora project is led by Maria Chen.", "Aurora project is led by"),
            "generate_answer_strict": "NOT_FOUND",
            "check_support": _judge_naming("Maria Chen"),
            "contextualize_question": "Who else leads the Aurora project?",
            "rewrite_query": "Aurora project leaders",
        }
    )
    graph, _ = make_graph(llm, checkpointer=InMemorySaver())
    first = run_turn(graph, "Who leads the Aurora project?", route="single", thread_id="t")
    assert first["short_answer"] == "Maria Chen"
    second = run_turn(graph, "Anyone else?", route="single", thread_id="t")

    assert step(second, "check_support")["excluded"] == {"items": ["Maria Chen"], "repeated": ["Maria Chen"]}
    rewrite = user_text(next(m for name, m in llm.calls if name == "generate_answer_strict"))
    assert "something other than Maria Chen" in rewrite
    assert second["refused"] is True
    assert second["refusal_reason"] == (
        "the passages name nothing besides Maria Chen, which the question excludes"
    )


def test_an_answer_naming_what_the_question_excludes_is_written_again_naming_the_other(make_graph) -> None:
    llm = ScriptedChatModel(
        replies={
            "generate_answer": cite("Maria Chen was born in Lisbon.", "born in Lisbon"),
            "generate_answer_strict": cite("Maria Chen studied engineering in Delft.", "Delft"),
            "check_support": _judge_naming("Lisbon", "Delft"),
        }
    )
    graph, _ = make_graph(llm)
    state = run_turn(graph, "Which city besides Lisbon is part of Maria Chen's story?", route="single")

    assert nodes_run(state).count("check_support") == 2
    assert state["refused"] is False and state["short_answer"] == "Delft"
    assert "Delft" in state["answer"] and "Lisbon" not in state["answer"]
