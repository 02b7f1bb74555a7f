"""``graph.not_found_min_probability``: the local generator's NOT_FOUND stands only when its first token
is that likely; otherwise the most likely answer is written and checked like any draft.

The real model's mask is tested in ``tests/tools/providers/test_chat_local.py``; here a scripted reader
stands in for it (greedy NOT_FOUND, an answer once the refusal is masked) to pin down the wiring."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from core.settings import load_settings
from graphs.rag.nodes.generate_answer import generate_answer
from graphs.rag.nodes.regenerate_answer import regenerate_answer
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel, prompt_of

# A museum leaflet: the answer is stated, behind a same-topic sentence.
PASSAGE = {"n": 1, "chunk_id": "m::0", "doc_id": "m", "source": "museum.md", "title": "Visiting", "page": None,
           "url": None, "origin": "kb",
           "text": "Tickets cost 12 euros. Groups of ten or more pay 9 euros each."}  # fmt: skip
ANSWER = "Groups of ten or more pay 9 euros each. [1]"


class DoubtfulReader(ScriptedChatModel):
    """Greedy decoding opens with NOT_FOUND, which carries ``p_not_found`` of the first token's
    probability; with the refusal masked, the reply is ``ANSWER``. Records what each call asked for."""

    p_not_found: float = 0.3
    asked: list[dict[str, Any]] = []

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append((prompt_of(messages), list(messages)))
        opening = kwargs.get("unlikely_opening")
        self.asked.append(opening or {})
        masked = opening is not None and self.p_not_found < opening["below"]
        metadata = (
            {"unlikely_opening": {"probability": self.p_not_found, "masked": masked}} if opening else {}
        )
        message = AIMessage(content=ANSWER if masked else "NOT_FOUND", response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])


class LocalResources(Resources):
    llm_is_local = True  # type: ignore[assignment]


def generate(p_not_found: float, *, local: bool = True, node: Any = generate_answer, **graph: Any):
    llm = DoubtfulReader(p_not_found=p_not_found, asked=[])
    resources = (LocalResources if local else Resources)(load_settings(graph=graph), llm=llm)
    state = {"standalone_question": "How much does a ticket cost for a school group of 25?",
             "language": "en", "route": "single", "context": [PASSAGE], "support": []}  # fmt: skip
    update = node(state, {}, resources=resources)
    return update, update["steps"][-1]["decision"], llm.asked


def test_an_unlikely_not_found_gives_way_to_the_answer() -> None:
    update, decision, asked = generate(0.3, not_found_min_probability=0.5)

    assert asked == [{"words": ["NOT_FOUND"], "below": 0.5}]
    assert not update["generator_refused"] and update["answer_draft"] == ANSWER
    assert decision["not_found_probability"] == 0.3 and decision["not_found_masked"] is True


def test_a_likely_not_found_stands() -> None:
    update, decision, _ = generate(0.8, not_found_min_probability=0.5)

    assert update["generator_refused"] and update["answer_draft"] == ""
    assert decision["not_found_probability"] == 0.8 and decision["not_found_masked"] is False


def test_the_strict_rewrite_after_a_rejection_follows_the_same_rule() -> None:
    update, decision, asked = generate(0.3, node=regenerate_answer, not_found_min_probability=0.5)

    assert asked == [{"words": ["NOT_FOUND"], "below": 0.5}] and not update["generator_refused"]
    assert decision["retry"] == "support" and decision["not_found_masked"] is True


@pytest.mark.parametrize(
    ("local", "setting"),
    [(True, None), (False, 0.5)],
    ids=["switched-off", "hosted-model"],
)
def test_greedy_decides_when_off_or_for_a_hosted_model(local: bool, setting: float | None) -> None:
    # The mask is the local model's (a logits processor); a hosted model is not asked for it. The judge
    # verifies here: the fitted verifier would have P(NOT_FOUND) recorded (next test).
    update, decision, asked = generate(
        0.3, local=local, not_found_min_probability=setting, support_verifier="judge"
    )

    assert asked == [{}] and update["generator_refused"]
    assert "not_found_probability" not in decision


def test_for_the_fitted_verifier_p_not_found_is_recorded_and_greedy_still_decides() -> None:
    # 'auto' with the local model and the offline reranker the settings choose: the fitted verifier,
    # which reads P(NOT_FOUND); a bound no first token falls under masks nothing.
    update, decision, asked = generate(0.3)

    assert asked == [{"words": ["NOT_FOUND"], "below": 1e-9}] and update["generator_refused"]
    assert decision["not_found_probability"] == 0.3 and decision["not_found_masked"] is False


def test_it_is_off_by_default() -> None:
    # Measured on fresh questions: what it rescued was more often wrong than right (docs/benchmarks.md).
    assert load_settings().graph.not_found_min_probability is None
