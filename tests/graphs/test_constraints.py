"""An answer must state the asked fact for the asked constraint, with figures read from its sources."""

from __future__ import annotations

import pytest

from graphs.rag.nodes._constraints import (
    question_constraints,
    unmet_constraints,
    unread_constraints,
    unstated_numbers,
)


def test_a_figure_no_cited_passage_states_is_unstated() -> None:
    passages = ["香港2021年GDP增长6.4%，为多年来最快。"]
    assert unstated_numbers("2021年香港GDP增长了约10%。[1]", passages, "2021年香港GDP增长了多少？") == ["10"]
    assert unstated_numbers("2021年香港GDP增长了6.4%。[1]", passages, "2021年香港GDP增长了多少？") == []


def test_a_figure_spelled_out_in_the_passage_or_named_in_the_question_is_stated() -> None:
    passage = ["Stewart scored six touchdowns in his first games."]
    assert (
        unstated_numbers("Stewart had 6 touchdowns in 13 games [1].", passage, "How many in 13 games?") == []
    )
    assert (
        unstated_numbers("全职员工每年有25天年假 [1]。", ["全职员工每年享有二十五天带薪年假。"], "年假几天？")
        == []
    )


def test_the_constraints_are_the_years_and_ordinals_the_question_names() -> None:
    assert question_constraints("第七届香港立法会议员2022年宣誓的时间") == ["2022", "第七届"]
    assert question_constraints("How many days of annual leave do employees get?") == []


def test_a_figure_stated_for_another_year_does_not_meet_the_constraint() -> None:
    passage = "根据规划，塔里木油田将力争2025年油气产量突破4000万吨。2035年达到5000万吨。"
    assert unmet_constraints("4000万吨", ["2021"], [passage]) == ["2021"]


def test_the_constraint_may_be_stated_in_the_sentence_next_to_the_answer() -> None:
    passage = "塔里木油田公布了2021年的成绩。全年油气产量达到3182万吨。这是历史新高。"
    assert unmet_constraints("3182万吨", ["2021"], [passage]) == []
    far = "塔里木油田公布了2021年的成绩。一。二。全年油气产量达到3182万吨。"
    assert unmet_constraints("3182万吨", ["2021"], [far]) == ["2021"]


def test_without_constraints_or_a_short_answer_found_verbatim_nothing_is_judged() -> None:
    assert unmet_constraints("25 days", [], ["Employees get 25 days."]) == []
    assert unmet_constraints("", ["2021"], ["Employees get 25 days."]) == []
    assert unmet_constraints("thirty days", ["2021"], ["Employees get 25 days."]) == []


@pytest.mark.parametrize(
    ("question", "constraints"),
    [
        ("Who won the 2019 election?", ["2019"]),
        ("What did the band release in June 2015?", ["2015"]),
        ("In 2019, who chaired the board?", ["2019"]),
        ("Which courses ran in Spring 2021?", ["2021"]),
        ("2022年冬奥会在哪里举办？", ["2022"]),
        ("第七届运动会在哪里举行？", ["第七届"]),
        ("第三届茶叶博览会在哪个城市举办？", ["第三届"]),
        ("这座城市的第五任市长是谁？", ["第五任"]),
        ("船队的第二艘科考船叫什么名字？", ["第二艘"]),
        ("公司2023年第一季度的营收是多少？", ["2023", "第一季"]),
        # must not fire: 第N次 counts occurrences, which passages state as 首次 or as a list of years
        ("她第一次登上珠峰是在哪一年？", []),
        ("这颗彗星第二次被观测到是什么时候？", []),
        ("乐队第三次来华演出是在哪个城市？", []),
        # must not fire: a number labelled by a name is not a year
        ("Who works in Suite 2001?", []),
        ("Where did Flight 1549 land?", []),
        ("When was Windows 2000 released?", []),
        ("How many seats does Room 1850 have?", []),
    ],
)  # fmt: skip
def test_the_years_and_editions_a_question_names_are_its_constraints_labels_and_occurrences_are_not(
    question: str, constraints: list
) -> None:
    from graphs.rag.nodes._constraints import question_constraints

    assert question_constraints(question) == constraints


# On a chain a constraint usually qualifies a hop, not the answer: "the river of the town that hosted
# the 2012 summit" - the passage stating the river never names 2012. There it is met when a passage the
# chain read states it at all (graph.chain_constraints_anywhere).
@pytest.mark.parametrize(
    ("constraints", "passages", "unread"),
    [
        (["2012"], ["The 2012 summit of the Baltic League met in Varna.", "Varna lies on the Devnya."], []),
        (
            ["2012"],
            ["The 2011 summit of the Baltic League met in Varna.", "Varna lies on the Devnya."],
            ["2012"],
        ),
        (["2012"], ["The club's 2012–13 season ended in May.", "Its coach was Ilse Brandt."], []),
        (["2012"], ["The hall seats 12012 people."], ["2012"]),  # a year is a whole number
        (["第三届"], ["第三届梅岭音乐节在青溪镇举办。", "青溪镇位于湖南省。"], []),
        (["第三届"], ["第三屆梅嶺音樂節在青溪鎮舉辦。"], []),  # either script
        (["第三届"], ["第二届梅岭音乐节在青溪镇举办。"], ["第三届"]),
        (["1998", "第二届"], ["第二届评选于1998年举行。"], []),
        (["1998", "第二届"], ["第二届评选于1999年举行。"], ["1998"]),
        ([], ["Anything."], []),
    ],
)
def test_on_a_chain_a_constraint_is_met_when_any_passage_read_states_it(
    constraints, passages, unread
) -> None:
    assert unread_constraints(constraints, passages) == unread


BRIDGE_CONTEXT = [
    {"n": 1, "text": "The 2012 summit of the Baltic League met in Varna."},
    {"n": 2, "text": "Varna lies on the Devnya river."},
]


@pytest.mark.parametrize(
    ("route", "anywhere", "unmet"),
    [
        ("iterative", True, []),  # the chain read the passage stating 2012
        ("iterative", False, ["2012"]),  # near the answer only, as before
        ("single", True, ["2012"]),  # a single passage answers a single-hop question: near the answer
    ],
)
def test_a_chains_constraint_is_read_anywhere_on_the_chain_only_when_switched_on(route, anywhere, unmet):
    from core.answer import SupportVerdict
    from core.settings import GraphSettings
    from graphs.rag.nodes.check_support import constraint_check

    state = {
        "question": "Which river flows through the town that hosted the 2012 summit?",
        "route": route,
        "context": BRIDGE_CONTEXT,
    }
    verdicts = [
        SupportVerdict(sentence="Varna lies on the Devnya river. [2]", citations=[2], verdict="stated")
    ]
    graph = GraphSettings(chain_constraints_anywhere=anywhere)
    assert constraint_check(state, "Devnya", verdicts, graph)["unmet"] == unmet
