"""A follow-up pointing into the list the previous answer gave is resolved by position, without a model."""

from __future__ import annotations

import pytest

from graphs.rag.nodes._list_reference import listed_items, resolve_list_reference


@pytest.mark.parametrize(
    ("follow_up", "previous_answer", "resolved"),
    [
        ("When was the second one built?", "The museum has two wings: the East Wing and the West Wing. [1]",
         "When was the West Wing built?"),
        ("Who designed the latter?", "The campus has two libraries: the Maple Library and the Cedar Library [1].",
         "Who designed the Cedar Library?"),
        ("那第三首是谁作曲的？", "这张专辑收录了三首歌：《晨光》、《远行》和《归途》。[1]", "《归途》是谁作曲的？"),
        ("后者有多少员工？", "集团旗下有两家公司：蓝海物流与青山制造。[2]", "青山制造有多少员工？"),
        ("第一款售价多少？", "该品牌推出了“极光”和“星尘”两款相机。[1]", "“极光”售价多少？"),
        # "of", "'s" and a noun the items share still point into the list
        ("Who designed the second of them?", "The campus has two libraries: the Maple Library and the Cedar Library [1].",
         "Who designed the Cedar Library?"),
        ("How tall is the first wing?", "The museum has two wings: the East Wing and the West Wing. [1]",
         "How tall is the East Wing?"),
    ],
)  # fmt: skip
def test_an_ordinal_is_replaced_by_the_item_at_that_position(follow_up, previous_answer, resolved) -> None:
    assert resolve_list_reference(follow_up, previous_answer) == resolved


@pytest.mark.parametrize(
    ("follow_up", "previous_answer"),
    [
        ("And the second-largest one?", "The largest exhibit is the steamship Aurelia [1]."),  # a rank, not an item
        ("第七届的冠军是谁？", "历届冠军有：甲队、乙队。"),  # an edition is the question's own constraint
        ("第二个季度的营收是多少？", "公司有两个部门：销售和研发。"),  # a period
        ("What about the third one?", "They make two models: the A1 and the B2."),  # no third item
        ("When was the second one built?", "The museum was built in 1902 [1]."),  # nothing listed
        # an ordinal heading a noun of its own counts something else than the list
        ("Who was the first director?", "The museum has two wings: the East Wing and the West Wing. [1]"),
        ("When did the second season air?", "The show has two hosts: Ana Ruiz and Tom Berg [1]."),
        ("What was the last flight of the day?", "The airline flies to two cities: Oslo and Bergen [2]."),
    ],
)  # fmt: skip
def test_no_rewrite_without_a_list_item_the_ordinal_points_to(follow_up, previous_answer) -> None:
    assert resolve_list_reference(follow_up, previous_answer) is None


def test_quoted_titles_are_the_items_when_a_sentence_names_several() -> None:
    assert listed_items("她写过《甲》《乙》两本书 [1]。") == ["《甲》", "《乙》"]
