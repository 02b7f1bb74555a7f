"""An answer written in the user's Traditional Chinese is checked against passages written in Simplified
(and the reverse) as if both were one script: citations attributed, the short answer backed, numbers
and ordinals found. A wrong answer still fails. Cases from a railway, a clinic and a bakery."""

from __future__ import annotations

from graphs.rag.lexicon import numbers_in, one_script
from graphs.rag.nodes._citations import attribute_uncited, word_share
from graphs.rag.nodes._constraints import unmet_constraints, unstated_numbers
from graphs.rag.nodes._short_answer import backed_short_answer
from tools.knowledge_base.sparse import tokenize

RAILWAY = "高铁末班车晚上十点从台北发车，周末加开两班。"
CLINIC = "第十届社区义诊由陈医生主持，每位居民可免费检查两项。"
BAKERY = "面包店每天早上七点开门，蛋挞每个十五元。"


def test_an_uncited_traditional_sentence_is_attributed_to_its_simplified_passage() -> None:
    text, added = attribute_uncited("末班車晚上十點從台北發車。", {1: BAKERY, 2: RAILWAY}, tokenize)

    assert text == "末班車晚上十點從台北發車。 [2]"
    assert added[0]["passage"] == 2


def test_a_sentence_no_passage_states_stays_uncited_in_either_script() -> None:
    assert attribute_uncited("麵包店週一公休。", {1: RAILWAY, 2: CLINIC}, tokenize)[1] == []
    assert word_share("末班車晚上十點發車。", RAILWAY, tokenize) > word_share(
        "末班車晚上十點發車。", BAKERY, tokenize
    )


def test_the_short_answer_is_backed_across_scripts_and_a_wrong_one_is_not() -> None:
    assert backed_short_answer("陳醫生", [CLINIC], tokenize) == "陳醫生"
    assert backed_short_answer("十五元", ["麵包店每天早上七點開門，蛋撻每個十五元。"], tokenize) == "十五元"
    assert backed_short_answer("林醫生", [CLINIC], tokenize) == ""


def test_numbers_and_ordinals_are_read_in_either_script() -> None:
    assert numbers_in("每位居民可免費檢查兩項") == numbers_in("每位居民可免费检查两项") == {"2"}
    assert unstated_numbers("免費檢查兩項，共3項。[1]", [CLINIC], "可以檢查幾項？") == ["3"]
    # the question's ordinal, in Traditional, is found beside the answer in the Simplified passage
    assert unmet_constraints("陳醫生", ["第十屆"], [CLINIC]) == []
    assert unmet_constraints("陳醫生", ["第九屆"], [CLINIC]) == ["第九屆"]  # reported as asked


def test_one_script_leaves_simplified_and_other_text_as_written() -> None:
    assert one_script(RAILWAY) == RAILWAY
    assert one_script("Suite 2001, 9:00") == "Suite 2001, 9:00"
