"""``graph.name_pronoun_referents``: when the rewrite hands a Chinese follow-up back unchanged with its
pronoun still in it, one more call names what the pronoun stands for, and the name replaces it, if the
conversation writes that name. The cases are from other conversations than the follow-up benchmark's
(a bridge, a choir, a café, a clinic)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from core.settings import load_settings
from graphs.rag.nodes.contextualize import contextualize, kept_pronoun, with_named_referent
from graphs.rag.resources import Resources
from tests.graphs.helpers import ScriptedChatModel


@pytest.mark.parametrize(
    ("message", "pronoun"),
    [
        ("它有多长？", "它"),
        ("他们每周排练几次？", "他们"),
        ("她的电话分机是多少？", "她"),
        ("那它周末开吗？", "它"),
    ],
)
def test_a_pronoun_the_rewrite_kept_is_found(message: str, pronoun: str) -> None:
    found = kept_pronoun(message, message)
    assert found is not None and found.group() == pronoun


@pytest.mark.parametrize(
    ("rewrite", "message"),
    [
        ("滨海大桥有多长？", "它有多长？"),  # the rewrite resolved it
        ("其他品牌的电动车有补贴吗？", "其他品牌的电动车有补贴吗？"),  # 其他: "other"
        ("其它的呢？", "其它的呢？"),
        ("吉他课多少钱？", "吉他课多少钱？"),  # 吉他: "guitar"
        ("保护他人隐私有什么规定？", "保护他人隐私有什么规定？"),  # 他人: "other people"
        ("How long is it?", "How long is it?"),  # English rewrites named the referent 10 times of 10
        ("会议室在哪里？", "会议室在哪里？"),
    ],
)
def test_no_kept_pronoun_where_none_leans_on_the_conversation(rewrite: str, message: str) -> None:
    assert kept_pronoun(rewrite, message) is None


CONVERSATION = "滨海大桥是哪年通车的？ 滨海大桥于2008年通车。"


@pytest.mark.parametrize(
    ("reply", "standalone"),
    [
        ("滨海大桥", "滨海大桥有多长？"),
        ("“滨海大桥”。", "滨海大桥有多长？"),  # quotes and a full stop around the name
        ("东江大桥", None),  # a name the conversation never wrote
        ("它指的是2008年通车的那座位于滨海新区的跨海大桥，全长很长", None),  # a sentence, not a name
        ("它", None),
        ("", None),
    ],
)
def test_the_name_replaces_the_pronoun_only_when_the_conversation_writes_it(
    reply: str, standalone: str | None
) -> None:
    message = "它有多长？"
    pronoun = kept_pronoun(message, message)
    assert pronoun is not None
    assert with_named_referent(message, pronoun, reply, CONVERSATION) == standalone


def rewrite(message: str, replies: dict[str, Any], **graph: Any) -> tuple[str, dict[str, Any], list[str]]:
    llm = ScriptedChatModel(replies=replies)
    history = [
        HumanMessage("合唱团的指挥是谁？"),
        AIMessage("合唱团的指挥是陈立。[2]"),
        HumanMessage(message),
    ]
    state = {"question": message, "messages": history}
    update = contextualize(state, {}, resources=Resources(load_settings(graph=graph), llm=llm))
    return update["standalone_question"], update["steps"][-1]["decision"], llm.prompts_called()


def test_a_kept_pronoun_is_named_in_one_more_call() -> None:
    standalone, decision, prompts = rewrite(
        "他们每周排练几次？",
        {"contextualize_question": "他们每周排练几次？", "name_pronoun_referent": "合唱团"},
        name_pronoun_referents=True,
    )

    assert standalone == "合唱团每周排练几次？"
    assert prompts == ["contextualize_question", "name_pronoun_referent"]
    assert decision["fallback"] == "the rewrite kept a pronoun: named what it stands for"
    assert decision["llm_calls"] == 2


def test_a_resolved_rewrite_costs_no_second_call() -> None:
    standalone, _, prompts = rewrite(
        "他们每周排练几次？", {"contextualize_question": "合唱团每周排练几次？"}, name_pronoun_referents=True
    )
    assert standalone == "合唱团每周排练几次？" and prompts == ["contextualize_question"]


def test_a_made_up_name_leaves_the_message_as_it_was() -> None:
    standalone, decision, _ = rewrite(
        "他们每周排练几次？",
        {"contextualize_question": "他们每周排练几次？", "name_pronoun_referent": "管弦乐团"},
        name_pronoun_referents=True,
    )
    assert standalone == "他们每周排练几次？" and "fallback" not in decision


def test_on_by_default() -> None:
    assert load_settings().graph.name_pronoun_referents is True


def test_switched_off_the_rewrite_is_taken_as_it_comes() -> None:
    standalone, _, prompts = rewrite(
        "他们每周排练几次？", {"contextualize_question": "他们每周排练几次？"}, name_pronoun_referents=False
    )
    assert standalone == "他们每周排练几次？" and prompts == ["contextualize_question"]
