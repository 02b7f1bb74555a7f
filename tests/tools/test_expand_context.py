"""expand_context rules on a real embedded index: neighbours, parents, sentence windows, keyed rows,
ACL, de-duplication, document order, token cap and step bound."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.errors import ConfigError
from core.settings import ExpandSettings
from tests.tools.search_corpus import build_corpus
from tools.expand_context import expand_context
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.knowledge_base.records import Hit, LegScore


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    settings = build_corpus(tmp_path_factory.mktemp("expand") / "home")
    with KnowledgeBase.open(settings) as opened:
        yield opened


def seeds(kb: KnowledgeBase, *chunk_ids: str, groups=("A", "B")) -> list[Hit]:
    """Direct hits as a search would return them, best first (scores descending)."""
    chunks = {c.chunk_id: c for c in kb.store.fetch(list(chunk_ids))}
    return [
        Hit(
            chunk_id=cid,
            doc_id=chunks[cid].doc_id,
            text=chunks[cid].text,
            score=1.0 - i / 10,
            legs={"dense": LegScore(rank=i + 1, score=0.9)},
            chunk=chunks[cid],
        )  # fmt: skip
        for i, cid in enumerate(chunk_ids)
    ]


def expand(kb, hits, groups=("A",), **settings) -> list[Hit]:
    knobs = {"neighbours": 1, "merge_parent_min_children": 2, "max_context_tokens": 5000, **settings}
    max_steps = knobs.pop("max_steps", 8)
    return expand_context(hits, kb, list(groups), ExpandSettings(**knobs), max_steps=max_steps)


def ids(hits) -> list[str]:
    return [h.chunk_id for h in hits]


def test_neighbours_within_the_window_are_added_in_document_order(kb):
    one = expand(kb, seeds(kb, "handbook::c3"), neighbours=1)
    assert ids(one) == ["handbook::c2", "handbook::c3", "handbook::c4"]
    two = expand(kb, seeds(kb, "handbook::c3"), neighbours=2)
    assert ids(two) == ["handbook::c1", "handbook::c2", "handbook::c3", "handbook::c4", "handbook::c5"]
    none = expand(kb, seeds(kb, "handbook::c3"), neighbours=0)
    assert ids(none) == ["handbook::c3"]


def test_pieces_are_marked_direct_or_expanded_from_their_seed(kb):
    pieces = {h.chunk_id: h for h in expand(kb, seeds(kb, "handbook::c3"), neighbours=2)}
    direct = pieces["handbook::c3"]
    assert direct.is_direct and direct.score == 1.0 and direct.legs["dense"].rank == 1
    for cid in ("handbook::c1", "handbook::c2", "handbook::c4", "handbook::c5"):
        assert pieces[cid].expanded_from == "handbook::c3"
        assert pieces[cid].legs == {} and pieces[cid].score == direct.score


def test_enough_sibling_hits_are_replaced_by_their_parent(kb):
    merged = expand(kb, seeds(kb, "handbook::c0", "handbook::c1"), merge_parent_min_children=2)
    assert ids(merged) == ["handbook::parent0"]
    parent = merged[0]
    assert parent.is_direct and parent.score == 1.0
    assert "twenty-five days" in parent.text and "carried over" in parent.text


def test_too_few_sibling_hits_keep_their_own_chunks(kb):
    kept = expand(kb, seeds(kb, "handbook::c0", "handbook::c1"), merge_parent_min_children=3)
    assert ids(kept) == ["handbook::c0", "handbook::c1", "handbook::c2"]
    assert [h.is_direct for h in kept] == [True, True, False]


def test_sentence_window_chunks_read_their_window_instead_of_neighbours(kb):
    pieces = expand(kb, seeds(kb, "notes::c1"), neighbours=2)
    assert ids(pieces) == ["notes::c1"]
    assert (
        pieces[0].text
        == "The building opens at seven. The cafeteria opens at eight. Lunch is served until two."
    )


def test_overlapping_windows_are_not_read_twice(kb):
    pieces = expand(kb, seeds(kb, "notes::c0", "notes::c1"), neighbours=0)
    # notes::c0's window ("building ... cafeteria") lies inside notes::c1's window: it is dropped.
    assert ids(pieces) == ["notes::c1"]


def test_a_row_pulls_in_rows_sharing_its_key_across_tables(kb):
    pieces = expand(kb, seeds(kb, "orders::row::Orders::1"), neighbours=0)
    assert ids(pieces) == [
        "orders::row::Orders::1",
        "order-lines::row::Lines::1",
        "order-lines::row::Lines::2",
    ]
    assert all(p.expanded_from == "orders::row::Orders::1" for p in pieces[1:])


def test_keyed_rows_the_caller_may_not_read_are_never_added(kb):
    as_a = ids(expand(kb, seeds(kb, "orders::row::Orders::1"), groups=["A"], neighbours=0))
    assert "order-lines::row::Lines::4" not in as_a
    as_a_and_b = ids(expand(kb, seeds(kb, "orders::row::Orders::1"), groups=["A", "B"], neighbours=0))
    assert "order-lines::row::Lines::4" in as_a_and_b


def test_neighbours_the_caller_may_not_read_are_never_added(kb):
    as_a = ids(expand(kb, seeds(kb, "security::c0"), groups=["A"], neighbours=2))
    assert as_a == ["security::c0"]
    as_a_and_b = ids(expand(kb, seeds(kb, "security::c0"), groups=["A", "B"], neighbours=2))
    assert as_a_and_b == ["security::c0", "security::c1", "security::c2"]


def test_a_seed_the_caller_may_not_read_is_dropped(kb):
    pieces = expand(kb, seeds(kb, "board-minutes::c0", "handbook::c5"), groups=["A"], neighbours=1)
    assert ids(pieces) == ["handbook::c4", "handbook::c5"]


def test_hits_without_chunks_are_fetched_and_duplicates_kept_once(kb):
    bare = [
        Hit(chunk_id="handbook::c4", doc_id="handbook", text="", score=0.7),
        Hit(chunk_id="handbook::c4", doc_id="handbook", text="", score=0.5),
    ]
    pieces = expand(kb, bare, neighbours=0)
    assert ids(pieces) == ["handbook::c4"]
    assert pieces[0].chunk is not None and "Train travel" in pieces[0].text and pieces[0].score == 0.7


def test_documents_follow_their_best_hit_and_pieces_follow_document_order(kb):
    pieces = expand(kb, seeds(kb, "handbook::c4", "faq-zh::c0", "handbook::c1"), neighbours=0)
    assert ids(pieces) == ["handbook::c1", "handbook::c4", "faq-zh::c0"]


def test_token_cap_drops_expansion_pieces_before_direct_hits(kb):
    count = kb.embedder.count_tokens
    texts = {c.chunk_id: c.text for c in kb.store.fetch([f"handbook::c{i}" for i in range(6)])}
    # Room for both direct hits and exactly one neighbour: the one next to the best hit (c1).
    budget = count(texts["handbook::c0"]) + count(texts["handbook::c3"]) + count(texts["handbook::c1"])
    assert budget >= 64 and count(texts["handbook::c2"]) > 0
    pieces = expand(kb, seeds(kb, "handbook::c0", "handbook::c3"), neighbours=1, merge_parent_min_children=5,
                    max_context_tokens=budget)  # fmt: skip
    assert ids(pieces) == ["handbook::c0", "handbook::c1", "handbook::c3"]
    assert sum(count(h.text) for h in pieces) <= budget


def test_the_best_direct_hit_is_kept_even_alone_over_the_cap(kb):
    pieces = expand(kb, seeds(kb, "annual-report::c0", "handbook::c4"), max_context_tokens=64)
    assert kb.embedder.count_tokens(pieces[0].text) > 64
    assert ids(pieces) == ["annual-report::c0"]


def test_a_direct_hit_that_does_not_fit_is_dropped_with_its_expansions(kb):
    pieces = expand(kb, seeds(kb, "handbook::c4", "annual-report::c0"), neighbours=1, max_context_tokens=70)
    assert ids(pieces) == ["handbook::c3", "handbook::c4", "handbook::c5"]


def test_expansion_rounds_are_bounded_by_max_steps(kb):
    pieces = expand(kb, seeds(kb, "handbook::c3"), neighbours=3, max_steps=1)
    assert ids(pieces) == ["handbook::c2", "handbook::c3", "handbook::c4"]


def test_web_hits_pass_through_after_the_knowledge_base(kb):
    web = Hit(chunk_id="web:1", doc_id="https://example.org", text="from the web", score=0.3, origin="web",
              url="https://example.org")  # fmt: skip
    pieces = expand(kb, [*seeds(kb, "handbook::c5"), web], neighbours=0)
    assert ids(pieces) == ["handbook::c5", "web:1"]


def test_empty_groups_are_refused(kb):
    with pytest.raises(ConfigError):
        expand(kb, seeds(kb, "handbook::c0"), groups=[])
