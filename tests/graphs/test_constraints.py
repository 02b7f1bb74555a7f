"""An answer must state the asked fact for the asked constraint, with figures read from its sources."""

from __future__ import annotations

import pytest

from graphs.rag.nodes._constraints import (
    cite_passages_stating_numbers,
    question_constraints,
    unmet_constraints,
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


# Passages of a library's visitor guide and a city transport page: no benchmark's domain.
LIBRARY = {
    1: "The central library has a reading room on the second floor and a children's wing.",
    2: "The central library's reading room seats 240 visitors and opens at 9 am.",
    3: "Bus line 240 stops outside the railway station.",
    4: "市图书馆的阅览室位于二楼。",
    5: "市图书馆阅览室共有240个座位，上午9点开放。",
}


@pytest.mark.parametrize(
    ("sentence", "question", "added_passage"),
    [
        # the figure is right, the marker is the neighbouring passage's: the stating passage is cited too
        ("The reading room seats 240 visitors [1].", "How many seats?", 2),
        ("阅览室共有240个座位。[4]", "阅览室有多少座位？", 5),
        # must not fire: the cited passage states the figure already
        ("The reading room seats 240 visitors [2].", "How many seats?", None),
        # must not fire: the figure is the question's own
        ("The library has a reading room for 240 visitors [1].", "Is there room for 240 visitors?", None),
        # must not fire: no passage states 310 (an invented figure stays unstated for the check to reject)
        ("The reading room seats 310 visitors [1].", "How many seats?", None),
        # must not fire: the only passage stating 240 is about something else (few shared words)
        ("The gallery holds 240 paintings [1].", "How many paintings?", None),
        # must not fire: the sentence cites nothing (attribution of uncited sentences is another step)
        ("The reading room seats 240 visitors.", "How many seats?", None),
    ],
)
def test_a_right_figure_under_the_wrong_marker_gains_the_passage_that_states_it(
    sentence: str, question: str, added_passage: int | None
) -> None:
    from tools.knowledge_base.sparse import tokenize

    text, added = cite_passages_stating_numbers(sentence, LIBRARY, question, tokenize)
    if added_passage is None:
        assert (text, added) == (sentence, [])
    else:
        assert [a["passage"] for a in added] == [added_passage]
        assert f"[{added_passage}]" in text and text.count("[") == 2  # the model's marker stays


def test_only_the_sentence_with_the_misplaced_figure_changes() -> None:
    from tools.knowledge_base.sparse import tokenize

    answer = "The central library has a reading room [1]. It seats 240 visitors [1]."
    text, added = cite_passages_stating_numbers(answer, LIBRARY, "How many seats?", tokenize)
    assert text == "The central library has a reading room [1]. It seats 240 visitors [1][2]."
    assert added[0]["numbers"] == ["240"]


@pytest.mark.parametrize(
    ("question", "constraints"),
    [
        ("Who won the 2019 election?", ["2019"]),
        ("What did the band release in June 2015?", ["2015"]),
        ("In 2019, who chaired the board?", ["2019"]),
        ("Which courses ran in Spring 2021?", ["2021"]),
        ("2022年冬奥会在哪里举办？", ["2022"]),
        ("第七届运动会在哪里举行？", ["第七届"]),
        # must not fire: a number labelled by a name is not a year
        ("Who works in Suite 2001?", []),
        ("Where did Flight 1549 land?", []),
        ("When was Windows 2000 released?", []),
        ("How many seats does Room 1850 have?", []),
    ],
)  # fmt: skip
def test_the_years_a_question_names_are_its_constraints_labels_are_not(
    question: str, constraints: list
) -> None:
    from graphs.rag.nodes._constraints import question_constraints

    assert question_constraints(question) == constraints
