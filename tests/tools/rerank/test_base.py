"""rerank_for_queries: a passage is judged against every wording of the question and keeps its best score."""

from __future__ import annotations

from collections.abc import Sequence

from tools.knowledge_base.records import Hit
from tools.rerank.base import Reranker, rerank_for_queries


class SharedWords(Reranker):
    """Scores a passage by the share of the query's words it holds (no words in common: 0)."""

    name = "shared-words"

    def __init__(self) -> None:
        self.queries: list[str] = []

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        self.queries.append(query)
        words = query.lower().split()
        scored = [
            h.model_copy(update={"rerank_score": sum(w in h.text.lower() for w in words) / len(words)})
            for h in hits
        ]
        return sorted(scored, key=lambda h: -(h.rerank_score or 0.0))[:top_n]


HITS = [
    Hit(chunk_id="zh:0", doc_id="zh", text="学校 共有 学生 1500 人", score=0.02),
    Hit(chunk_id="en:0", doc_id="en", text="The school choir has 40 singers", score=0.03),
    Hit(chunk_id="en:1", doc_id="en", text="Opening hours of the library", score=0.01),
]


def test_one_query_is_one_plain_rerank() -> None:
    reranker = SharedWords()
    hits = rerank_for_queries(reranker, ["the school choir"], HITS, 2)
    assert [h.chunk_id for h in hits] == ["en:0", "en:1"] and reranker.queries == ["the school choir"]


def test_each_passage_keeps_its_best_score_over_the_wordings() -> None:
    reranker = SharedWords()
    hits = rerank_for_queries(reranker, ["how many students does the school have", "学校 学生 多少"], HITS, 3)
    # the Chinese passage shares no word with the English question, two of three with its translation
    assert [h.chunk_id for h in hits] == ["zh:0", "en:0", "en:1"]
    assert hits[0].rerank_score == 2 / 3 and hits[1].rerank_score == 2 / 7
    assert reranker.queries == ["how many students does the school have", "学校 学生 多少"]


def test_no_passage_is_returned_twice_and_top_n_holds() -> None:
    hits = rerank_for_queries(SharedWords(), ["school", "学校", "library"], HITS, 2)
    assert len(hits) == 2 and len({h.chunk_id for h in hits}) == 2
