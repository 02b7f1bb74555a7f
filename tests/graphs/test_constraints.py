"""An answer must state the asked fact for the asked constraint, with figures read from its sources."""

from __future__ import annotations

import pytest

from graphs.rag.nodes._constraints import question_constraints, unmet_constraints, unstated_numbers


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
