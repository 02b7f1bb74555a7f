"""Train the fast router (``graphs/rag/classifier/local.py``) on a labelled mixture and save its weights.

The mixture (Adaptive-RAG's recipe: labels from the dataset a question comes from):
- single: SQuAD v1.1 dev (English) and CMRC 2018 trial (Chinese) questions: one passage answers them;
- iterative: HotpotQA (bridge / comparison) and the multi-hop questions we wrote
  (``bench/data/iterative_questions.jsonl``, mostly Chinese: no Chinese multi-hop set is in the data);
- direct: the greetings, arithmetic, common-knowledge and chit-chat questions we wrote
  (``bench/data/direct_questions.jsonl``, English and Chinese).

Train and test are disjoint slices: SQuAD articles 0-31 / 32-47; CMRC articles with index % 4 != 0 /
== 0; HotpotQA questions 50-99 / 0-49 (only the first 100 are in the data); every third written
question (per language and kind) is held out.

Two variants are fitted (multinomial logistic regression, balanced class weights, C chosen by 5-fold
cross-validation on the training slice): surface cues only, and cues + the e5 query embedding. The one
with the better cross-validated macro-F1 is saved to ``graphs/rag/classifier/models/router.json``;
the held-out test figures of both are printed and saved to ``bench/results/router_training.json``.

    .venv/bin/python -m bench.train_router [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent.eval.shared_data import shared_data_dir

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = shared_data_dir()
WRITTEN = ROOT / "bench" / "data"
RESULTS = ROOT / "bench" / "results"
LABELS = ["direct", "single", "iterative"]
SQUAD_TRAIN_ARTICLES = 32
SAMPLE_PER_SOURCE = {"train": 300, "test": 100}
EMBEDDING_CACHE = ROOT / ".ragpilot-bench" / "router_query_embeddings.npz"


@dataclass(frozen=True)
class LabelledQuestion:
    question: str
    route: str
    source: str  # squad, cmrc, hotpot, written-direct-en, written-iterative-zh, ...


def _squad_questions(path: Path, test_article: Any) -> dict[str, list[str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        articles = json.load(f)["data"]
    split: dict[str, list[str]] = {"train": [], "test": []}
    for index, article in enumerate(articles):
        part = "test" if test_article(index) else "train"
        for paragraph in article["paragraphs"]:
            split[part].extend(qa["question"].strip() for qa in paragraph["qas"])
    return split


def _written(path: Path) -> dict[str, list[LabelledQuestion]]:
    """Every third question per (language, kind) is held out for testing."""
    split: dict[str, list[LabelledQuestion]] = {"train": [], "test": []}
    seen: dict[tuple[str, str], int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = (row["language"], row["kind"])
        position = seen.get(key, 0)
        seen[key] = position + 1
        part = "test" if position % 3 == 2 else "train"
        split[part].append(
            LabelledQuestion(row["question"], row["route"], f"written-{row['route']}-{row['language']}")
        )
    return split


def load_mixture(data_dir: Path) -> dict[str, list[LabelledQuestion]]:
    """The labelled train and test slices (see the module docstring)."""
    mixture: dict[str, list[LabelledQuestion]] = {"train": [], "test": []}
    squad = _squad_questions(data_dir / "squad" / "dev-v1.1.json.gz", lambda i: i >= SQUAD_TRAIN_ARTICLES)
    cmrc = _squad_questions(data_dir / "cmrc2018" / "cmrc2018_trial.json", lambda i: i % 4 == 0)
    for part, seed in (("train", 1), ("test", 2)):
        for source, questions in (("squad", squad[part]), ("cmrc", cmrc[part])):
            sample = random.Random(seed).sample(questions, min(SAMPLE_PER_SOURCE[part], len(questions)))
            mixture[part].extend(LabelledQuestion(q, "single", source) for q in sample)
    hotpot = json.loads((data_dir / "hotpotqa" / "hotpot_dev_distractor_first100.json").read_text())
    mixture["test"].extend(LabelledQuestion(r["question"], "iterative", "hotpot") for r in hotpot[:50])
    mixture["train"].extend(LabelledQuestion(r["question"], "iterative", "hotpot") for r in hotpot[50:])
    for name in ("direct_questions.jsonl", "iterative_questions.jsonl"):
        written = _written(WRITTEN / name)
        for part in mixture:
            mixture[part].extend(written[part])
    return mixture


def cached_query_embeddings(texts: list[str], embedder: Any, cache_path: Path) -> np.ndarray:
    """Query embeddings through a small file cache (keyed by model and text): retraining after a change
    of the surface cues must not re-embed a thousand questions."""
    cache: dict[str, np.ndarray] = {}
    if cache_path.is_file():
        stored = np.load(cache_path, allow_pickle=False)
        if str(stored["model"]) == embedder.name:
            cache = dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))
    missing = [t for t in dict.fromkeys(texts) if t not in cache]
    for text in missing:
        cache[text] = np.asarray(embedder.embed_query(text), np.float32)
    if missing:
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(cache)
        np.savez(
            cache_path,
            model=embedder.name,
            texts=np.asarray(keys),
            vectors=np.stack([cache[k] for k in keys]),
        )
    return np.stack([cache[t] for t in texts]).astype(np.float64)


def featurize(
    questions: list[LabelledQuestion], embedder: Any, cache_path: Path = EMBEDDING_CACHE
) -> tuple[np.ndarray, np.ndarray]:
    """Surface cues and e5 query embeddings, one row per question."""
    from graphs.rag.classifier.local import surface_features

    cues = np.stack([surface_features(q.question) for q in questions])
    return cues, cached_query_embeddings([q.question for q in questions], embedder, cache_path)


def fit(
    x: np.ndarray, y: np.ndarray, c_grid: tuple[float, ...] = (0.03, 0.1, 0.3, 1.0, 3.0)
) -> dict[str, Any]:
    """Standardise, pick C by stratified 5-fold CV macro-F1, refit on everything; numpy weights out."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.model_selection import StratifiedKFold

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0  # constant columns: leave them unscaled
    z = (x - mean) / scale
    best_c, best_f1 = c_grid[0], -1.0
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    for c in c_grid:
        scores = []
        for train_idx, val_idx in folds.split(z, y):
            model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000)
            model.fit(z[train_idx], y[train_idx])
            scores.append(f1_score(y[val_idx], model.predict(z[val_idx]), average="macro"))
        if float(np.mean(scores)) > best_f1:
            best_c, best_f1 = c, float(np.mean(scores))
    model = LogisticRegression(C=best_c, class_weight="balanced", max_iter=5000).fit(z, y)
    order = [list(model.classes_).index(label) for label in LABELS]
    return {
        "C": best_c,
        "cv_macro_f1": round(best_f1, 4),
        "mean": mean,
        "scale": scale,
        "coef": model.coef_[order],
        "intercept": model.intercept_[order],
    }


def predict(params: dict[str, Any], x: np.ndarray) -> np.ndarray:
    logits = ((x - params["mean"]) / params["scale"]) @ params["coef"].T + params["intercept"]
    return np.asarray(LABELS)[logits.argmax(axis=1)]


def scores(y_true: list[str], y_pred: list[str], sources: list[str]) -> dict[str, Any]:
    """Accuracy, macro-F1, per-route F1, per-source accuracy and the confusion matrix (rows = truth)."""
    from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

    per_source: dict[str, list[bool]] = {}
    for truth, pred, source in zip(y_true, y_pred, sources, strict=True):
        per_source.setdefault(source, []).append(truth == pred)
    return {
        "n": len(y_true),
        "accuracy": round(float(accuracy_score(y_true, y_pred)), 4),
        "macro_f1": round(float(f1_score(y_true, y_pred, labels=LABELS, average="macro")), 4),
        "f1_per_route": dict(
            zip(
                LABELS,
                (round(float(v), 4) for v in f1_score(y_true, y_pred, labels=LABELS, average=None)),
                strict=True,
            )
        ),
        "accuracy_per_source": {s: round(sum(v) / len(v), 4) for s, v in sorted(per_source.items())},
        "confusion": {
            "labels": LABELS,
            "rows_truth": confusion_matrix(y_true, y_pred, labels=LABELS).tolist(),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=None, help="default: the classifier's models/router.json")
    args = parser.parse_args(argv)

    from core.settings import load_settings
    from graphs.rag.classifier.local import FEATURE_NAMES, ROUTER_MODEL_PATH
    from tools.providers.embedder_factory import get_local_e5_embedder

    out = args.out or ROUTER_MODEL_PATH
    mixture = load_mixture(args.data)
    embedder = get_local_e5_embedder(load_settings())
    started = time.perf_counter()
    features = {part: featurize(rows, embedder) for part, rows in mixture.items()}
    print(
        f"featurized {sum(map(len, mixture.values()))} questions in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    y = {part: np.asarray([q.route for q in rows]) for part, rows in mixture.items()}
    variants = {
        "surface": lambda part: features[part][0],
        "surface+e5": lambda part: np.hstack(features[part]),
    }
    report: dict[str, Any] = {
        "train": {
            s: sum(q.source == s for q in mixture["train"])
            for s in sorted({q.source for q in mixture["train"]})
        },
        "test": {
            s: sum(q.source == s for q in mixture["test"])
            for s in sorted({q.source for q in mixture["test"]})
        },
        "variants": {},
    }
    fitted = {}
    for name, inputs in variants.items():
        params = fit(inputs("train"), y["train"])
        fitted[name] = params
        predicted = predict(params, inputs("test")).tolist()
        test = scores(y["test"].tolist(), predicted, [q.source for q in mixture["test"]])
        report["variants"][name] = {"C": params["C"], "cv_macro_f1": params["cv_macro_f1"], "test": test}
        print(f"{name:>11}: C={params['C']:<5} cv macro-F1 {params['cv_macro_f1']:.3f}   "
              f"test accuracy {test['accuracy']:.3f} macro-F1 {test['macro_f1']:.3f}")  # fmt: skip
    chosen = max(fitted, key=lambda n: fitted[n]["cv_macro_f1"])
    params = fitted[chosen]
    previous: dict[str, Any] = json.loads(out.read_text()) if out.is_file() else {}
    weights = {
        "version": 1,
        "labels": LABELS,
        "feature_names": list(FEATURE_NAMES),
        "embedder": embedder.name if chosen == "surface+e5" else None,
        "embedding_dim": embedder.dim if chosen == "surface+e5" else 0,
        "mean": [round(float(v), 6) for v in params["mean"]],
        "scale": [round(float(v), 6) for v in params["scale"]],
        "coef": [[round(float(v), 6) for v in row] for row in params["coef"]],
        "intercept": [round(float(v), 6) for v in params["intercept"]],
        # bench/router.py owns these two: keep its last measurement across retraining.
        "auto_choice": previous.get("auto_choice", "local"),
        "trained_on": {"questions": len(mixture["train"]), **report["train"]},
        "measured": {
            "variant": chosen,
            "C": params["C"],
            "cv_macro_f1": params["cv_macro_f1"],
            "test": report["variants"][chosen]["test"],
            **{k: v for k, v in (previous.get("measured") or {}).items() if k == "auto"},
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(weights, ensure_ascii=False) + "\n", encoding="utf-8")
    report["chosen"] = chosen
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "router_training.json").write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    print(f"saved {chosen} weights to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
