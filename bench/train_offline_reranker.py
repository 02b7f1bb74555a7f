"""Train the offline reranker's weights (``tools/rerank/models/offline_reranker.json``) on SciFact *train*.

    .venv/bin/python -m bench.train_offline_reranker            # grid search by 5-fold CV, then fit and export

LambdaMART (LightGBM's ``lambdarank``, truncated at 10) over ``candidate_features`` of the first 30
hits of the default hybrid search (RRF k=60 over each leg's top 50). Hyper-parameters and the feature
set are chosen by 5-fold cross-validated nDCG@10 on the train queries only; the test qrels are never
read here. Raw scores are then calibrated to probabilities of relevance by Platt scaling fitted on
out-of-fold scores. LightGBM is needed only here: the trees are exported as plain arrays and evaluated
by ``tools.rerank.offline.TreeEnsemble`` (checked against LightGBM's own predictions before saving).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.rerank_candidates import (  # noqa: E402
    DATA,
    FEATURE_GROUPS,
    CandidateBuilder,
    Candidates,
    Dataset,
    e5_signals,
    load_beir,
    ndcg10,
    rescored_run,
)
from tools.rerank.offline import (  # noqa: E402
    DEFAULT_MODEL_PATH,
    FEATURE_INDEX,
    MODEL_FORMAT,
    RerankerModelFile,
    TreeArrays,
    TreeEnsemble,
    load_model_file,
)

FOLDS = 5
SEED = 0
BASE_PARAMS = {
    "objective": "lambdarank",
    "lambdarank_truncation_level": 10,
    "min_child_samples": 20,
    "subsample": 0.8,
    "subsample_freq": 1,
    "colsample_bytree": 0.8,
    "reg_lambda": 1.0,
    "random_state": SEED,
    "deterministic": True,
    "n_jobs": 1,
    "verbose": -1,
}
GRID = {"num_leaves": [7, 15], "n_estimators": [200, 400], "learning_rate": [0.05]}
ALL_FEATURES = [n for group in FEATURE_GROUPS.values() for n in group]


def _stack(cands: Sequence[Candidates], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    cols = [FEATURE_INDEX[n] for n in names]
    x = np.concatenate([c.features[:, cols] for c in cands])
    y = np.concatenate([c.labels for c in cands])
    return x, y, [len(c.features) for c in cands]


def fit(cands: Sequence[Candidates], names: Sequence[str], params: dict):
    import lightgbm as lgb

    x, y, groups = _stack(cands, names)
    model = lgb.LGBMRanker(**{**BASE_PARAMS, **params})
    model.fit(x, y, group=groups)
    return model


def cross_validate(
    qrels, ds: Dataset, cands: Sequence[Candidates], names: Sequence[str], params: dict
) -> dict:
    """Mean nDCG@10 over FOLDS query folds, and every query's out-of-fold raw scores."""
    order = np.random.default_rng(SEED).permutation(len(cands))
    folds = np.array_split(order, FOLDS)
    cols = [FEATURE_INDEX[n] for n in names]
    fold_scores, oof = [], {}
    for held in folds:
        held_set = set(held.tolist())
        model = fit([cands[i] for i in order if i not in held_set], names, params)
        for i in held:
            oof[cands[i].query_id] = model.predict(cands[i].features[:, cols])
        held_cands = [cands[i] for i in held]
        fold_scores.append(
            ndcg10(qrels, rescored_run(ds, held_cands, lambda x, m=model: m.predict(x[:, cols])))
        )
    return {"cv_ndcg@10": float(np.mean(fold_scores)), "folds": fold_scores, "oof": oof}


def platt_scaling(raw: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(a, b) minimising the log loss of sigmoid(a * raw + b) against binary labels (Newton steps, bounded)."""
    y = (labels > 0).astype(float)
    a, b = 1.0, 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(a * raw + b)))
        w = np.maximum(p * (1 - p), 1e-9)
        grad = np.array([np.sum((p - y) * raw), np.sum(p - y)])
        hess = np.array(
            [[np.sum(w * raw * raw), np.sum(w * raw)], [np.sum(w * raw), np.sum(w)]]
        ) + 1e-6 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        a, b = a - step[0], b - step[1]
        if np.abs(step).max() < 1e-8:
            break
    return float(a), float(b)


def _flatten_tree(root: dict) -> tuple[TreeArrays, int]:
    """One LightGBM tree dump as flat arrays (pre-order; a leaf has feature -1 and points to itself), and its depth."""
    columns: dict[str, list] = {"feature": [], "threshold": [], "left": [], "right": [], "value": []}
    depth_seen = 1
    # An explicit stack (node, depth, parent index, side) instead of recursion: bounded by the node count.
    stack: list[tuple[dict, int, int, str]] = [(root, 1, -1, "")]
    while stack:
        node, depth, parent, side = stack.pop()
        index = len(columns["feature"])
        if parent >= 0:
            columns[side][parent] = index
        is_leaf = "split_feature" not in node
        if not is_leaf and node["decision_type"] != "<=":
            raise ValueError(f"unsupported split {node['decision_type']}")
        columns["feature"].append(-1 if is_leaf else int(node["split_feature"]))
        columns["threshold"].append(0.0 if is_leaf else float(node["threshold"]))
        columns["left"].append(index)
        columns["right"].append(index)
        columns["value"].append(float(node.get("leaf_value", 0.0)) if is_leaf else 0.0)
        depth_seen = max(depth_seen, depth)
        if not is_leaf:
            # Right first so the left child is visited (numbered) next.
            stack.append((node["right_child"], depth + 1, index, "right"))
            stack.append((node["left_child"], depth + 1, index, "left"))
    return TreeArrays(**columns), depth_seen


def export_trees(model) -> tuple[list[TreeArrays], int]:
    """Every tree of a fitted LightGBM model as flat arrays, and the deepest tree's depth."""
    flat = [_flatten_tree(info["tree_structure"]) for info in model.booster_.dump_model()["tree_info"]]
    return [tree for tree, _ in flat], max(depth for _, depth in flat)


def load_params(path: Path = DEFAULT_MODEL_PATH) -> dict:
    """The hyper-parameters the shipped weights were trained with."""
    return dict(load_model_file(path).training["params"])  # type: ignore[arg-type]


def choose_params(
    qrels, ds: Dataset, cands: Sequence[Candidates], names: Sequence[str], grid: list[dict]
) -> tuple[dict, dict]:
    """The grid point with the best 5-fold CV nDCG@10, and its CV result (with out-of-fold scores)."""
    best: tuple[dict, dict] | None = None
    for params in grid:
        cv = cross_validate(qrels, ds, cands, names, params)
        print(f"  {params} cv nDCG@10 {cv['cv_ndcg@10']:.4f}", flush=True)
        if best is None or cv["cv_ndcg@10"] > best[1]["cv_ndcg@10"]:
            best = (params, cv)
    assert best is not None
    return best


def _checked_export(model, cands: Sequence[Candidates], names: Sequence[str]) -> tuple[list[TreeArrays], int]:
    """Trees as arrays, refusing an export whose numpy predictions differ from LightGBM's."""
    trees, max_depth = export_trees(model)
    x, _, _ = _stack(cands, names)
    gap = float(np.abs(TreeEnsemble(trees, max_depth).predict(x) - model.predict(x)).max())
    if gap > 1e-6:
        raise SystemExit(f"exported trees disagree with LightGBM by {gap}")
    return trees, max_depth


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_MODEL_PATH)
    parser.add_argument("--features", default=",".join(FEATURE_GROUPS), help="feature groups to use")
    parser.add_argument("--no-grid", action="store_true", help="use the first grid point only")
    parser.add_argument(
        "--single-pass", action="store_true", help="no first-pass model choosing the feedback"
    )
    args = parser.parse_args(argv)

    ds = load_beir(DATA / "scifact")
    qrels = ds.qrels["train"]
    signals = e5_signals(ds)
    query_ids = [q for q in signals.query_ids if q in qrels]
    builder = CandidateBuilder(ds, signals)
    cands = builder.build(query_ids, qrels)
    names = [n for g in args.features.split(",") for n in FEATURE_GROUPS[g]]
    baseline = ndcg10(qrels, rescored_run(ds, cands, lambda x: -x[:, FEATURE_INDEX["fused_position_log"]]))
    print(f"train queries {len(cands)}, features {len(names)}, RRF k=60 nDCG@10 {baseline:.4f}", flush=True)

    grid = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    params, cv = choose_params(qrels, ds, cands, names, grid[:1] if args.no_grid else grid)
    figures = {
        "train_rrf60_ndcg@10": round(baseline, 4),
        "train_cv_ndcg@10_first_pass": round(cv["cv_ndcg@10"], 4),
    }
    feedback_trees, feedback_depth = None, None
    if not args.single_pass:
        # A second pass whose feedback passages are the first pass's top (not the fusion's), kept only
        # if it wins in cross-validation. Its training rows use out-of-fold first-pass scores, as unseen
        # queries will get from the first pass fitted on all of train.
        second_cands = builder.build(query_ids, qrels, feedback_scores=cv["oof"])
        second_cv = cross_validate(qrels, ds, second_cands, names, params)
        print(f"  second pass cv nDCG@10 {second_cv['cv_ndcg@10']:.4f}", flush=True)
        figures["train_cv_ndcg@10_second_pass"] = round(second_cv["cv_ndcg@10"], 4)
        if second_cv["cv_ndcg@10"] > cv["cv_ndcg@10"]:
            feedback_trees, feedback_depth = _checked_export(fit(cands, names, params), cands, names)
            cands, cv = second_cands, second_cv
    figures["passes"] = 1 if feedback_trees is None else 2
    oof = np.concatenate([cv["oof"][c.query_id] for c in cands])
    labels = np.concatenate([c.labels for c in cands])
    calibration = platt_scaling(oof, labels)
    trees, max_depth = _checked_export(fit(cands, names, params), cands, names)
    model_file = RerankerModelFile(
        format=MODEL_FORMAT,
        feature_names=names,
        trees=trees,
        calibration=calibration,
        prf_passages=3,
        prf_weight=1.0,
        max_depth=max_depth,
        feedback_trees=feedback_trees,
        feedback_max_depth=feedback_depth,
        training={
            "data": "BEIR SciFact train qrels (809 queries); test qrels never read",
            "first_stage": "hybrid RRF k=60 over dense (e5) and BM25 top 50 each; first 30 candidates",
            "learner": "LightGBM lambdarank, exported to arrays"
            + ("" if args.single_pass else "; two passes"),
            "params": params,
            "cv_folds": FOLDS,
            **figures,
            "calibration": "Platt scaling on out-of-fold scores",
            "script": "bench/train_offline_reranker.py",
        },
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(model_file.model_dump(mode="json"), separators=(",", ":")) + "\n")
    print(
        f"chosen {params}: {figures}; calibration a={calibration[0]:.3f} b={calibration[1]:.3f}; "
        f"{len(trees)} trees, depth {max_depth}; saved {args.out}"
    )


if __name__ == "__main__":
    main()
