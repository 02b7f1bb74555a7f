"""IRCoT's prompt in the question's language (``graph.ircot_example_in_language``): a Chinese question is
shown an example reasoning sentence written in Chinese, because the sentence becomes the next search
query over the user's documents. Cases from a harbour museum, written before any benchmark
question was run; the real model's effect is measured in ``bench/results/ircot_example_in_language_*.json``."""

from __future__ import annotations

import pytest

from core.settings import load_settings
from graphs.rag.nodes.ircot_reason import ircot_reason
from graphs.rag.resources import Resources
from prompts import load_prompt
from tests.graphs.helpers import ScriptedChatModel

HITS = [
    {"chunk_id": "m::1", "doc_id": "m", "text": "海港博物馆的馆长是程慧，她曾在渡轮公司工作。", "score": 1.0,
     "source": "museum.md", "title": "海港博物馆", "origin": "kb", "metadata": {}},
]  # fmt: skip


@pytest.mark.parametrize(
    ("switch", "language", "question", "shown"),
    [
        (True, "zh", "海港博物馆馆长以前在哪家公司工作？", True),
        (False, "zh", "海港博物馆馆长以前在哪家公司工作？", False),
        (True, "en", "Where did the curator of the harbour museum work before?", False),  # must not fire
    ],
)
def test_a_chinese_question_is_shown_a_chinese_example_sentence_with_the_switch(
    switch: bool, language: str, question: str, shown: bool
) -> None:
    llm = ScriptedChatModel(
        replies={"ircot_reason": '{"thought": "海港博物馆的馆长是程慧。", "answer_found": false}'}
    )
    settings = load_settings(graph={"ircot_example_in_language": switch})
    state = {"question": question, "standalone_question": question, "language": language, "hits": HITS}
    update = ircot_reason(state, {}, resources=Resources(settings, llm=llm))

    system = llm.calls[0][1][0].text
    assert (load_prompt("ircot_reason_example_zh").strip() in system) is shown
    assert system.startswith(load_prompt("ircot_reason"))
    assert update["queries"] == ["海港博物馆的馆长是程慧。"]
