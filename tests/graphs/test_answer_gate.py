"""The answer gate in ``generate_answer``: the local model's P(yes) that the passages state the answer,
against the question language's cut-off, decides whether an answer is written at all.

The real model's judgement is tested in ``test_local_llm.py``; here a scripted model stands in for it
(reporting first-token probabilities like the local one) to pin down the wiring."""

from __future__ import annotations

import math
from typing import Any

from langchain_core.outputs import ChatResult

from core.settings import load_settings
from graphs.rag.nodes.generate_answer import generate_answer
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel, prompt_of

PASSAGE = {"n": 1, "chunk_id": "c::0", "doc_id": "c", "source": "cup.md", "title": "Cup", "page": None,
           "url": None, "origin": "kb", "text": "The 2023 Harbour Cup was won by the Gulls."}  # fmt: skip


class ScriptedLocalModel(ScriptedChatModel):
    """Answers the gate's yes/no with P(yes) = ``p_yes``, reported as the local model reports it."""

    p_yes: float = 0.5

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        result = super()._generate(messages, stop, run_manager, **kwargs)
        if prompt_of(messages) == "passages_state_answer":
            result.generations[0].message.response_metadata["first_token_logprobs"] = [
                {"token": "yes", "logprob": math.log(self.p_yes)},
                {"token": "no", "logprob": math.log(1 - self.p_yes)},
            ]
        return result


class LocalResources(Resources):
    llm_is_local = True  # type: ignore[assignment]


def run_node(p_yes: float, language: str = "en", route: str = "single", **graph: Any):
    llm = ScriptedLocalModel(
        p_yes=p_yes, replies={"passages_state_answer": "yes", "generate_answer": "The Gulls won it [1]."}
    )
    resources = LocalResources(load_settings(graph=graph), llm=llm)
    state = {
        "standalone_question": "Who won the cup?",
        "language": language,
        "route": route,
        "context": [PASSAGE],
    }
    return generate_answer(state, {}, resources=resources), llm.prompts_called()


def test_below_the_cut_off_no_answer_is_written_and_the_turn_counts_as_not_found() -> None:
    update, called = run_node(p_yes=0.1)

    assert called == ["passages_state_answer"]  # the answer call is never made
    assert update["generator_refused"] and update["answer_draft"] == ""
    assert update["steps"][-1]["decision"]["answer_gate"] == {"p_yes": 0.1, "cutoff": 0.27, "passed": False}


def test_at_or_above_the_cut_off_the_answer_is_written() -> None:
    update, called = run_node(p_yes=0.4)

    assert called == ["passages_state_answer", "generate_answer"]
    assert update["answer_draft"] == "The Gulls won it [1]." and not update["generator_refused"]


def test_a_chinese_question_is_held_to_the_chinese_cut_off() -> None:
    update, _ = run_node(p_yes=0.4, language="zh")  # passes in English (0.27), not in Chinese (0.50)

    assert update["steps"][-1]["decision"]["answer_gate"]["cutoff"] == 0.5
    assert update["generator_refused"]


def test_the_gate_is_off_for_iterative_questions_and_when_set_to_none() -> None:
    for update, called in (run_node(p_yes=0.01, route="iterative"), run_node(p_yes=0.01, answer_gate=None)):
        assert called == ["generate_answer"]
        assert "answer_gate" not in update["steps"][-1]["decision"] and update["answer_draft"]


def test_a_model_other_than_the_local_one_is_not_gated() -> None:
    llm = ScriptedChatModel(replies={"generate_answer": "The Gulls won it [1]."})
    state = {
        "standalone_question": "Who won the cup?",
        "language": "en",
        "route": "single",
        "context": [PASSAGE],
    }

    update = generate_answer(state, {}, resources=Resources(load_settings(), llm=llm))

    assert llm.prompts_called() == ["generate_answer"] and update["answer_draft"]
