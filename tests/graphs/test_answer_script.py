"""``graph.answer_in_users_script``: a question asked in Traditional Chinese is answered in Traditional
Chinese — the prompts name the script, and what the small model still writes in Simplified is
converted before the checks read it (a clinic's opening hours; the script detection and conversion
themselves are tested in ``tests/tools/test_chinese_script.py``)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from core.settings import load_settings
from graphs.rag.nodes._question_facts import read_question
from graphs.rag.nodes.contextualize import contextualize
from graphs.rag.nodes.generate_answer import generate_answer
from graphs.rag.nodes.refuse import refuse
from graphs.rag.nodes.start_turn import start_turn
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel

PASSAGE = {"n": 1, "chunk_id": "c::0", "doc_id": "c", "source": "clinic.md", "title": "門診時間", "page": None,
           "url": None, "origin": "kb", "text": "本診所週一至週五上午九點開門，週六上午十點開門。"}  # fmt: skip
TRADITIONAL = "診所週六幾點開門？"
SIMPLIFIED = "诊所周六几点开门？"
# What the 1.5B reader writes for the Traditional question: Traditional copied from the passage,
# Simplified where it wrote its own words.
MIXED_REPLY = "本診所週六上午十點开门，这是门诊时间。[1]"


def answer(question: str, **graph: Any) -> tuple[dict[str, Any], ScriptedChatModel]:
    llm = ScriptedChatModel(replies={"generate_answer": MIXED_REPLY})
    resources = Resources(load_settings(graph=graph), llm=llm)
    state = {"question": question, "standalone_question": question, "language": "zh", "route": "single",
             "context": [PASSAGE], "support": []}  # fmt: skip
    return generate_answer(state, {}, resources=resources), llm


def asked_language(llm: ScriptedChatModel) -> str:
    user = str(llm.calls[0][1][-1].content)
    return next(line for line in user.splitlines() if line.startswith("Answer language:"))


def test_the_question_facts_carry_the_script_of_the_users_message() -> None:
    assert read_question(TRADITIONAL, TRADITIONAL).chinese_script == "traditional"
    assert read_question(SIMPLIFIED, SIMPLIFIED).chinese_script == "simplified"
    assert read_question("When does the clinic open?", "When does the clinic open?").chinese_script is None
    # a follow-up goes by the user's own message, not by the rewrite
    assert read_question("诊所周六几点开门？", "那週六呢？").chinese_script == "traditional"


def test_a_traditional_question_is_answered_in_traditional() -> None:
    update, llm = answer(TRADITIONAL)

    assert asked_language(llm) == "Answer language: Traditional Chinese (繁體中文)"
    assert update["answer_draft"] == "本診所週六上午十點開門，這是門診時間。[1]"


def test_a_simplified_question_is_answered_as_the_model_wrote_it() -> None:
    update, llm = answer(SIMPLIFIED)

    assert asked_language(llm) == "Answer language: Simplified Chinese (简体中文)"
    assert update["answer_draft"] == MIXED_REPLY


def test_switched_off_every_chinese_question_asks_for_simplified_and_nothing_is_converted() -> None:
    update, llm = answer(TRADITIONAL, answer_in_users_script=False)

    assert asked_language(llm) == "Answer language: Simplified Chinese (简体中文)"
    assert update["answer_draft"] == MIXED_REPLY


def test_the_refusal_is_written_in_the_users_script() -> None:
    resources = Resources(load_settings(), llm=ScriptedChatModel())
    state = {"question": TRADITIONAL, "standalone_question": TRADITIONAL, "language": "zh"}

    refused = refuse(state, {}, resources=resources)

    assert refused["answer"] == "在現有資料中沒有找到這個問題的答案。"
    assert refuse({**state, "question": SIMPLIFIED, "standalone_question": SIMPLIFIED}, {},
                  resources=resources)["answer"] == "在现有资料中没有找到这个问题的答案。"  # fmt: skip


def test_on_by_default() -> None:
    assert load_settings().graph.answer_in_users_script is True


def test_a_message_that_does_not_tell_its_script_keeps_the_conversations() -> None:
    undecided = "高英是哪位皇帝的皇后？"  # every character is written alike in both scripts
    assert read_question(undecided, undecided).chinese_script is None
    assert read_question(undecided, undecided, previous_script="traditional").chinese_script == "traditional"
    # a message that tells its script is taken at its word, and English is no Chinese script
    assert read_question(SIMPLIFIED, SIMPLIFIED, previous_script="traditional").chinese_script == "simplified"
    assert read_question("Who was she?", "Who was she?", previous_script="traditional").chinese_script is None


def test_the_next_turn_inherits_the_script_from_the_previous_turns_facts() -> None:
    resources = Resources(load_settings(), llm=ScriptedChatModel())
    previous_turn = {"question": TRADITIONAL, "question_facts": read_question(TRADITIONAL, TRADITIONAL).model_dump()}

    follow_up = "周日呢？"  # tells no script
    update = start_turn({**previous_turn, "question": follow_up}, {}, resources=resources, runtime=None)
    assert update["question_facts"]["chinese_script"] == "traditional"

    # contextualize reads the facts again for the standalone question, and keeps the script
    llm = ScriptedChatModel(replies={"contextualize_question": "诊所周日几点开门？"})
    history = [HumanMessage(TRADITIONAL), AIMessage("週六上午十點開門。[1]"), HumanMessage(follow_up)]
    standalone = contextualize(
        {**previous_turn, **update, "messages": history}, {}, resources=Resources(load_settings(), llm=llm)
    )
    assert standalone["question_facts"]["chinese_script"] == "traditional"
    assert standalone["standalone_question"] == "診所周日几點開門？"  # 几 and 周 are written in both scripts
