"""Answer sentences and their [n] markers, as models actually write them."""

from __future__ import annotations

from graphs.rag.nodes._citations import (
    answer_sentences,
    attribute_uncited,
    cited_numbers,
    join_sentences,
    normalise_citations,
)
from graphs.rag.nodes.finalize_answer import citations_for
from tools.knowledge_base.sparse import tokenize


def test_markers_after_the_full_stop_belong_to_the_sentence_before() -> None:
    sentences = answer_sentences("Leave is 25 days. [2] Requests go to HR. [1][3]")
    assert [(s.text, s.citations) for s in sentences] == [
        ("Leave is 25 days. [2]", [2]),
        ("Requests go to HR. [1][3]", [1, 3]),
    ]


def test_chinese_sentences_and_full_width_brackets() -> None:
    sentences = answer_sentences("全职员工每年有二十五天年假[1]。兼职员工按比例计算【2】。")
    assert [s.citations for s in sentences] == [[1], [2]]
    assert (
        join_sentences([s.text for s in sentences])
        == "全职员工每年有二十五天年假[1]。兼职员工按比例计算【2】。"
    )


def test_grouped_markers_are_split_and_unknown_numbers_dropped() -> None:
    assert cited_numbers("a [1, 3] b [3][2]") == [1, 3, 2]
    assert normalise_citations("Leave is 25 days [1, 7]. HR approves it. [9]", valid={1, 2}) == (
        "Leave is 25 days [1]. HR approves it."
    )


def test_citations_resolve_to_passage_metadata_in_order_of_first_use() -> None:
    context = [
        {"n": 1, "chunk_id": "a::c0", "doc_id": "a", "source": "a.md", "title": "A", "page": 3, "url": None,
         "origin": "kb", "text": "x"},
        {"n": 2, "chunk_id": "w", "doc_id": "w", "source": "", "title": "Web", "page": None,
         "url": "https://example.org", "origin": "web", "text": "y"},
    ]  # fmt: skip
    citations = citations_for("First [2]. Second [1][2].", context)
    assert [(c["n"], c["chunk_id"], c["page"], c["url"]) for c in citations] == [
        (2, "w", None, "https://example.org"),
        (1, "a::c0", 3, None),
    ]


def test_an_uncited_sentence_is_attributed_to_the_passage_holding_its_words() -> None:
    passages = {
        1: "Edward Davis Wood Jr. was an American filmmaker, actor and writer.",
        2: "Scott Derrickson is an American director and producer.",
    }
    text, added = attribute_uncited(
        "Ed Wood was an American filmmaker. Derrickson is a director [2].", passages, tokenize
    )
    assert text == "Ed Wood was an American filmmaker. [1] Derrickson is a director [2]."
    assert added == [{"sentence": "Ed Wood was an American filmmaker.", "passage": 1, "overlap": 0.75}]


def test_chinese_sentences_are_attributed_by_character_bigrams() -> None:
    passages = {1: "2013年3月，作为壮族代表，马飚当选为第十二届全国政协副主席。", 2: "楚昭辅，北宋初年大臣。"}
    text, added = attribute_uncited("2013年3月，马飚担任第十二届全国政协副主席。", passages, tokenize)
    assert text.endswith("[1]") and added[0]["passage"] == 1


def test_a_sentence_matching_no_passage_stays_uncited() -> None:
    passages = {1: "The handbook grants 25 days of annual leave."}
    text, added = attribute_uncited("The moon is made of cheese.", passages, tokenize)
    assert (text, added) == ("The moon is made of cheese.", [])
