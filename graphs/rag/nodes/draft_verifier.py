"""What a verifier can read of an answer draft without another LLM call, and the model fitted on it.

The features: the reader's first-token P(``NOT_FOUND``) of the draft, each sentence's word share with the
passages it cites (titles included), the best cited passage's rerank score, sentences left uncited, and
the question's language. ``bench/draft_classifier.py`` fits a logistic regression on drafts labelled by
the gold and saves it to ``models/draft_verifier.json`` with the figures it was measured at; on 79 fresh
drafts it kept the JSON judge's right drafts and refused slightly more answers to unanswerable questions
(docs/benchmarks.md, session 25). Its weights belong to the local reader and the offline reranker they
were fitted with.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from graphs.rag.nodes._citations import answer_sentences, word_share, word_share_across_languages

DRAFT_VERIFIER_PATH = Path(__file__).resolve().parent.parent / "models" / "draft_verifier.json"


def passage_bodies(context: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Each context passage's title and text by its number: what a sentence citing it is compared with."""
    return {p["n"]: f"{p.get('title') or ''}\n{p['text']}" for p in context}


def draft_features(
    state: Mapping[str, Any], tokenize: Callable[[str], list[str]], across_languages: bool = True
) -> dict[str, Any]:
    """The draft's no-call features, as recorded (``bench.verifier_set``) and as scored.

    ``across_languages`` (``graph.share_across_languages``): a sentence in the other language than the
    passages it cites is compared by the names and numbers both languages write alike."""
    share = word_share_across_languages if across_languages else word_share
    sentences = answer_sentences(state.get("answer_draft") or "")
    steps = [s for s in state.get("steps") or [] if s["node"] in ("generate_answer", "regenerate_answer")]
    generated = steps[-1]["decision"] if steps else {}
    context = state.get("context") or []
    bodies = passage_bodies(context)
    rerank = {h["chunk_id"]: h.get("rerank_score") for h in state.get("hits") or []}
    scores = {p["n"]: rerank.get(p["chunk_id"]) for p in context}
    cited = sorted({n for s in sentences for n in s.citations if n in bodies})
    known = [float(s) for s in scores.values() if s is not None]
    cited_known = [float(s) for n in cited if (s := scores.get(n)) is not None]
    return {
        "not_found_probability": generated.get("not_found_probability"),
        "uncited_sentences": sum(1 for s in sentences if not s.citations),
        "context_passages": len(context),
        "sentence_shares": [
            round(share(s.text, "\n".join(bodies[n] for n in s.citations if n in bodies), tokenize), 3)
            for s in sentences
        ],
        "cited_rerank": max(cited_known) if cited_known else None,
        "top_rerank": max(known) if known else None,
        "chinese": state.get("language") == "zh",
    }


def model_inputs(found: Mapping[str, Any]) -> dict[str, float]:
    """The columns the fitted model reads, from the recorded features."""
    p_not_found = found.get("not_found_probability")
    rerank = found.get("cited_rerank")
    if rerank is None:
        rerank = found.get("top_rerank") or 0.0
    return {
        "best_share": max(found.get("sentence_shares") or [0.0]),
        "log_p_not_found": math.log10(max(float(p_not_found), 1e-4)) if p_not_found is not None else -4.0,
        "cited_rerank": float(rerank),
        "uncited": float((found.get("uncited_sentences") or 0) > 0),
        "chinese": float(bool(found.get("chinese"))),
    }


@functools.lru_cache(maxsize=1)
def load_draft_verifier(path: Path = DRAFT_VERIFIER_PATH) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def probability_right(found: Mapping[str, Any], model: Mapping[str, Any]) -> float:
    """P(the draft is right) under the fitted logistic regression (standardised columns)."""
    columns = model_inputs(found)
    z = float(model["intercept"])
    for name, weight in model["weights_per_sd"].items():
        z += float(weight) * (columns[name] - float(model["mean"][name])) / float(model["sd"][name])
    return 1 / (1 + math.exp(-z))


def draft_verdict(found: Mapping[str, Any], model: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The fitted verifier's verdict: P(right), its cut-off, and whether the draft is kept."""
    model = model or load_draft_verifier()
    p = probability_right(found, model)
    return {"p_right": round(p, 4), "cut": model["cut"], "kept": p >= float(model["cut"])}
