"""The QA scores against hand-computed cases: SQuAD normalisation, character-level Chinese, containment."""

from __future__ import annotations

import pytest

from agent.eval.answer_metrics import (
    answer_contained,
    answer_tokens,
    best_sentence_f1,
    exact_match,
    normalize_chinese,
    normalize_english,
    reference_answers,
    strip_citations,
    token_f1,
)
from agent.eval.datasets import QADataset, QAExample
from agent.eval.qa import (
    QAEvalConfig,
    QuestionResult,
    checks_fired,
    citations_repointed,
    not_found_masked,
    retrieved_titles,
    score_answer,
    summarize,
)
from core.answer import Answer, Citation, SupportVerdict


def test_english_normalisation_is_squads():
    assert normalize_english("The Denver Broncos!") == "denver broncos"
    assert normalize_english("  an   Apple, a day ") == "apple day"
    assert normalize_english("U.S.-based") == "usbased"


def test_chinese_normalisation_drops_cjk_punctuation_and_spaces():
    assert normalize_chinese("《踢爆》， 是的！") == "踢爆是的"


def test_a_chinese_answer_in_either_script_matches_a_gold_in_the_other():
    assert answer_contained("末班車晚上十點發車。[1]", [["十点"]], "zh")
    assert normalize_chinese("台北車站") == normalize_chinese("台北车站")
    assert not answer_contained("末班車晚上九點發車。", [["十点"]], "zh")


def test_chinese_tokens_are_characters_with_latin_runs_kept_whole():
    assert answer_tokens("答案是12人，NBA。", "zh") == ["答", "案", "是", "12", "人", "nba"]


def test_exact_match_takes_the_best_alias():
    assert exact_match("the Denver Broncos.", ["Denver Broncos", "Broncos"], "en") == 1.0
    assert exact_match("Denver", ["Denver Broncos"], "en") == 0.0
    assert exact_match("踢爆。", ["踢爆"], "zh") == 1.0


def test_english_f1_by_hand():
    # prediction tokens: broncos won in denver (4); gold: denver broncos (2); overlap 2
    # precision 2/4, recall 2/2 -> F1 = 2 * 0.5 * 1 / 1.5
    assert token_f1("The Broncos won in Denver", ["Denver Broncos"], "en") == pytest.approx(2 / 3)


def test_chinese_f1_is_character_level_by_hand():
    # prediction: 答 案 是 12 人 (5 tokens); gold: 12 人 (2); overlap 2 -> P 0.4, R 1.0, F1 = 0.8 / 1.4
    assert token_f1("答案是12人。", ["12人"], "zh") == pytest.approx(0.8 / 1.4)
    # partial overlap: gold 四分钟 vs prediction 4分钟: 分 钟 shared of 3 and 3 tokens -> 2/3
    assert token_f1("4分钟", ["四分钟"], "zh") == pytest.approx(2 / 3)


def test_f1_of_an_empty_prediction_is_zero():
    assert token_f1("", ["Paris"], "en") == 0.0


def test_best_sentence_f1_ignores_the_extra_sentence():
    prediction = "Paris is the capital. It has many museums and a long history of art."
    assert best_sentence_f1(prediction, ["Paris"], "en") == pytest.approx(
        token_f1("Paris is the capital.", ["Paris"], "en")
    )
    assert best_sentence_f1(prediction, ["Paris"], "en") > token_f1(prediction, ["Paris"], "en")


def test_english_containment_matches_whole_tokens():
    assert answer_contained("No, they were not of the same nationality.", [["no"]], "en")
    assert not answer_contained("I do not know.", [["no"]], "en")
    assert answer_contained("It was held by the Chief of Protocol.", [["Chief of Protocol"]], "en")


def test_containment_needs_every_group_like_rgb():
    groups = [["张丹"], ["张昊"]]
    assert answer_contained("冠军是张丹和张昊。", groups, "zh")
    assert not answer_contained("冠军是张丹。", groups, "zh")
    assert answer_contained("约131万人。", [["1313851", "131万"]], "zh")


def test_citation_markers_are_removed_before_scoring():
    assert (
        strip_citations("Paris is the capital [1]. It is big [2, 3].") == "Paris is the capital. It is big."
    )
    assert strip_citations("答案是12人【1】。") == "答案是12人。"


def test_several_required_parts_become_one_reference():
    assert reference_answers([["a", "b"]]) == ["a", "b"]
    assert reference_answers([["张丹"], ["张昊", "昊"]]) == ["张丹 张昊"]


def _example() -> QAExample:
    return QAExample(qid="q1", question="Were A and B both American?", answers=[["yes"]], language="en",
                     kind="comparison", gold_titles=["A", "B"])  # fmt: skip


def test_retrieved_titles_follow_retrieve_steps_in_order_without_repeats():
    steps = [
        {"node": "route_question", "decision": {}},
        {"node": "retrieve", "decision": {"hits": [{"title": "A"}, {"title": "C"}, {"title": "A"}]}},
        {"node": "retrieve", "decision": {"hits": [{"title": "D"}, {"title": "B"}]}},
    ]
    assert retrieved_titles(steps, 10) == ["A", "C", "D", "B"]
    assert retrieved_titles(steps, 2) == ["A", "C"]


def test_score_answer_scores_text_recall_and_citations():
    answer = Answer(
        question="Were A and B both American?",
        answer="Yes, both were American [1].",
        citations=[Citation(n=1, chunk_id="c1", doc_id="d1", title="A")],
        route="iterative",
        support=[SupportVerdict(sentence="Yes, both were American [1].", citations=[1], verdict="fully")],
        llm_calls=4,
        total_ms=1234.0,
        run_id="r",
    )
    steps = [{"node": "retrieve", "decision": {"hits": [{"title": "A"}, {"title": "X"}]}}]
    result = score_answer(_example(), answer, steps, recall_k=10)
    assert result.contained and result.em == 0.0
    # "yes both were american" (4 tokens) vs "yes": P 1/4, R 1 -> F1 0.4
    assert result.f1 == pytest.approx(0.4)
    assert result.supporting_recall == 0.5 and result.cited_recall == 0.5
    assert result.support_verdicts == {"fully": 1}


def test_em_and_f1_score_the_short_answer_and_containment_everything_shown():
    answer = Answer(
        question="Were A and B both American?",
        answer="Both were born in the United States [1].",
        short_answer="Yes",
        citations=[Citation(n=1, chunk_id="c1", doc_id="d1", title="A")],
        run_id="r",
    )
    result = score_answer(_example(), answer, [], recall_k=10)
    assert result.em == 1.0 and result.f1 == 1.0 and result.contained
    assert result.short_answer == "Yes"
    # everything shown: "yes both were born in united states" (7 tokens) vs "yes": F1 2/8
    assert result.f1_full_text == pytest.approx(0.25)


def test_a_refused_answer_scores_zero_even_if_it_repeats_the_question():
    answer = Answer(
        question="q",
        answer="The sources do not say whether the answer is yes.",
        refused=True,
        run_id="r",
        refusal_reason="no passage relevant to the question was found",
    )
    result = score_answer(_example(), answer, [], recall_k=10)
    assert result.refused and not result.contained and result.f1 == 0.0
    assert result.refusal_reason == "no passage relevant to the question was found"


def test_a_refusal_keeps_the_verdicts_of_the_draft_it_threw_away():
    # The judge refused "Jerusalem": which answers did it reject? The last check says, per sentence.
    judged = [{"sentence": "Tancred fought at Jerusalem [1].", "citations": [1], "verdict": "not"}]
    steps = [
        {"node": "check_support", "decision": {"verdicts": [{"sentence": "earlier", "verdict": "not"}]}},
        {"node": "regenerate_answer", "decision": {}},
        {"node": "check_support", "decision": {"verdicts": judged}},
        {"node": "refuse", "decision": {}},
    ]
    answer = Answer(question="q", answer="No.", refused=True, run_id="r", refusal_reason="unsupported")
    assert score_answer(_example(), answer, steps, recall_k=10).last_judgement == judged
    assert score_answer(_example(), answer, [], recall_k=10).last_judgement == []


def test_the_checks_that_fired_are_gathered_from_every_support_check_of_the_run():
    first = {
        "failed_checks": [
            {"check": "support", "action": "regenerate", "when_spent": "continue", "reason": ""}
        ],
        "verdicts": [{"sentence": "A.", "citations": [], "verdict": "not"}],
        "unstated_numbers": {"A.": ["12"]},
    }
    second = {
        "failed_checks": [
            {"check": "constraints", "action": "retrieve_again", "when_spent": "refuse", "reason": ""}
        ],
        "verdicts": [{"sentence": "B. [1]", "citations": [1], "verdict": "fully"}],
        "unstated_numbers": {},
    }
    steps = [
        {"node": "check_support", "decision": first},
        {"node": "regenerate_answer", "decision": {"failed_checks": [{"check": "usefulness"}]}},
        {"node": "check_support", "decision": second},
    ]
    assert checks_fired(steps) == ["constraints", "support", "uncited", "unstated_numbers"]


def test_a_clean_draft_fires_no_check():
    clean = {
        "failed_checks": [],
        "verdicts": [{"sentence": "B. [1]", "citations": [1]}],
        "unstated_numbers": {},
    }
    assert checks_fired([{"node": "check_support", "decision": clean}]) == []
    assert checks_fired([]) == []


def test_answer_calls_whose_unlikely_not_found_was_masked_are_counted():
    steps = [
        {"node": "generate_answer", "decision": {"not_found_probability": 0.31, "not_found_masked": True}},
        {"node": "check_support", "decision": {"failed_checks": []}},
        {"node": "regenerate_answer", "decision": {"not_found_probability": 0.02, "not_found_masked": False}},
        {"node": "generate_answer", "decision": {"says_not_found": True}},  # the switch off: nothing reported
    ]
    assert not_found_masked(steps) == 1 and not_found_masked([]) == 0


def test_sentences_whose_citation_was_repointed_are_counted():
    moved = [{"sentence": "A is 5. [1]", "from": [1], "to": 2}, {"sentence": "B. [3]", "from": [3], "to": 1}]
    steps = [
        {"node": "generate_answer", "decision": {"citations_repointed": moved}},
        {"node": "regenerate_answer", "decision": {"citations_repointed": []}},
        {"node": "generate_answer", "decision": {}},  # the switch off: nothing recorded
    ]
    assert citations_repointed(steps) == 2 and citations_repointed([]) == 0


def test_the_summary_counts_why_questions_were_refused():
    reasons = ["the passages do not contain the answer (after 1 re-retrievals)",
               "the passages do not contain the answer (after 0 re-retrievals)", None]  # fmt: skip
    results = [
        QuestionResult(
            qid=str(i), question="q", language="en", gold=[["a"]], refused=True, refusal_reason=reason
        )
        for i, reason in enumerate(reasons)
    ] + [QuestionResult(qid="answered", question="q", language="en", gold=[["a"]])]
    dataset = QADataset(name="t", format="hotpot", path="t.json", examples=[], passages=[])
    report = summarize(
        QAEvalConfig(dataset="t.json", format="hotpot"), dataset, results,
        index_documents=0, index_points=0, collection="c", llm="l", seconds=1.0,
    )  # fmt: skip
    assert report.refusal_reasons == {
        "the passages do not contain the answer (after N re-retrievals)": 2,
        "unknown": 1,
    }


def _result(route: str, ms: float, contained: bool, verdicts: dict[str, int], calls: int) -> QuestionResult:
    return QuestionResult(qid="x", question="q", language="en", gold=[["a"]], route=route, total_ms=ms,
                          contained=contained, support_verdicts=verdicts, llm_calls=calls)  # fmt: skip


def test_summary_groups_latency_and_calls_by_route_and_shares_support():
    results = [
        _result("single", 1000.0, True, {"fully": 2, "not": 1}, 2),
        _result("single", 3000.0, False, {"unchecked": 1}, 2),
        _result("iterative", 8000.0, True, {"partially": 1}, 6),
    ]
    dataset = QADataset(name="t", format="hotpot", path="t.json", examples=[], passages=[])
    config = QAEvalConfig(dataset="t.json", format="hotpot")
    report = summarize(
        config, dataset, results, index_documents=0, index_points=0, collection="c", llm="l", seconds=1.0
    )
    assert report.metrics["contained"] == pytest.approx(2 / 3, abs=1e-4)
    assert report.routes["single"].questions == 2 and report.routes["single"].llm_calls_per_question == 2.0
    assert report.routes["single"].latency.p50_ms == pytest.approx(2000.0)
    assert report.routes["iterative"].share == pytest.approx(1 / 3, abs=1e-4)
    assert report.llm_calls_per_question == pytest.approx(10 / 3, abs=1e-4)
    # 5 sentences: 2 fully, 1 not, 1 partially, 1 unchecked -> supported = 2 / 4 judged
    assert report.support["fully_share"] == 0.4 and report.support["supported_share"] == 0.5
