"""Is the answer in these passages? Four ways to ask the local model, on a labelled set (issue 11, item 3).

Every item is a question with two passages, labelled *answerable* (one passage states the gold answer)
or not (same-topic passages only: other paragraphs of the same SQuAD article, RGB's negatives):

- ``generator_argmax``: today's decision — the answer prompt (``generate_answer``), refused when the
  greedy first token opens ``NOT_FOUND``;
- ``generator_p_refuse``: the same call, refused when P(first token opens NOT_FOUND) reaches a
  calibrated cut-off (no extra call: the generator states the decision in its first token);
- ``yes_no_logprob``: a dedicated yes/no prompt (``prompts/passages_state_answer.md``), one output
  token, P(yes) against a calibrated cut-off;
- ``yes_no_json``: the same prompt answered as JSON ``{"answer_stated": bool}`` (the style of today's
  structured judgements);
- ``generator_yes_no``: the yes/no question appended to the answer prompt and asked before it, so the
  answer call reuses the passages already evaluated (its ``answer_call_after_seconds``).

Cut-offs are calibrated on RGB zh_refine questions 100–119 and a SQuAD dev sample outside
``bench.qa``'s (seed 1), per language, as the highest one keeping ``--keep`` of the answerable items
(the RGB noise run must not lose accuracy); they are reported on RGB 0–19 and the first 20 of ``bench.qa``'s SQuAD
sample (seed 0). Each item's scores go to its partial file (``bench/partials.py``) as it finishes: a run
that was stopped resumes.

    .venv/bin/python -m bench.answerable_gate      # saves bench/results/answerable_gate.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.eval.datasets import rgb_answer_groups, select_indexes  # noqa: E402
from agent.eval.shared_data import shared_data_dir  # noqa: E402
from bench.partials import partial_path  # noqa: E402
from graphs.rag.inspection import (  # noqa: E402
    ask_structured,
    ask_with_first_token,
    probability_of_opening,
    probability_yes,
)
from graphs.rag.nodes.check_answerable import answerable_prompt  # noqa: E402
from graphs.rag.nodes.generate_answer import NOT_FOUND, answer_prompt  # noqa: E402
from prompts import load_prompt  # noqa: E402

DATA = shared_data_dir()
OUT = ROOT / "bench" / "results" / "answerable_gate.json"
PASSAGE_CHARS = 500
SPLITS = {
    "calibration": {"rgb": range(100, 120), "squad_seed": 1},
    "report": {"rgb": range(0, 20), "squad_seed": 0},
}
METHODS = ("generator_argmax", "generator_p_refuse", "yes_no_logprob", "yes_no_json", "generator_yes_no")
SCORED = ("generator_p_refuse", "yes_no_logprob", "generator_yes_no")
LANGUAGES = ("en", "zh")


class AnswerStated(BaseModel):
    answer_stated: bool


def window(text: str, alias: str | None) -> str:
    """At most PASSAGE_CHARS of ``text``, around ``alias`` when given (the answer must stay in)."""
    if len(text) <= PASSAGE_CHARS:
        return text
    if alias is None or alias not in text:
        return text[:PASSAGE_CHARS]
    start = max(0, min(text.index(alias) - PASSAGE_CHARS // 2, len(text) - PASSAGE_CHARS))
    return text[start : start + PASSAGE_CHARS]


def rgb_items(indexes: range) -> list[dict[str, Any]]:
    lines = (DATA / "rgb" / "zh_refine.json").read_text(encoding="utf-8").splitlines()
    items = []
    for index in indexes:
        record = json.loads(lines[index])
        aliases = [a for group in rgb_answer_groups(record["answer"]) for a in group]
        positive = next((p for p in record["positive"] if any(a in p for a in aliases)), None)
        negatives = [window(p, None) for p in record["negative"][:2]]
        if positive is None or len(negatives) < 2:
            continue
        alias = next(a for a in aliases if a in positive)
        base = {"question": record["query"], "language": "zh", "source": f"rgb-{index}"}
        items.append({**base, "id": f"rgb-{index}-pos", "answerable": True,
                      "passages": [window(positive, alias), negatives[0]]})  # fmt: skip
        items.append({**base, "id": f"rgb-{index}-neg", "answerable": False, "passages": negatives})
    return items


def squad_items(seed: int, count: int, exclude: set[str]) -> list[dict[str, Any]]:
    with gzip.open(DATA / "squad" / "dev-v1.1.json.gz", "rt", encoding="utf-8") as f:
        articles = json.load(f)["data"]
    questions = [
        (a, p, qa)
        for a, article in enumerate(articles)
        for p, paragraph in enumerate(article["paragraphs"])
        for qa in paragraph["qas"]
    ]
    chosen = [questions[i] for i in select_indexes(len(questions), 200 if seed == 0 else 400, seed)]
    rng = random.Random(seed)
    items = []
    for a, p, qa in chosen:
        if qa["id"] in exclude:
            continue
        paragraphs = [x["context"] for x in articles[a]["paragraphs"]]
        aliases = [answer["text"] for answer in qa["answers"]]
        others = [t for i, t in enumerate(paragraphs) if i != p and not any(al in t for al in aliases)]
        if len(others) < 2:
            continue
        picked = rng.sample(others, 2)
        base = {"question": qa["question"], "language": "en", "source": qa["id"]}
        items.append({**base, "id": f"{qa['id']}-pos", "answerable": True,
                      "passages": [window(paragraphs[p], aliases[0]), window(picked[0], None)]})  # fmt: skip
        items.append({**base, "id": f"{qa['id']}-neg", "answerable": False,
                      "passages": [window(t, None) for t in picked]})  # fmt: skip
        if len(items) >= 2 * count:
            break
    return items


def split_items(split: str, count: int) -> list[dict[str, Any]]:
    spec = SPLITS[split]
    report_squad = {i["source"] for i in squad_items(0, count, set())} if split == "calibration" else set()
    items = rgb_items(spec["rgb"]) + squad_items(spec["squad_seed"], count, report_squad)
    rng = random.Random(7)
    for item in items:  # the answer's passage is not always first
        rng.shuffle(item["passages"])
    return items


def context_of(item: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"n": n, "text": text} for n, text in enumerate(item["passages"], start=1)]


def score_shared_prefix(llm: Any, item: dict[str, Any]) -> dict[str, Any]:
    """``generator_yes_no``: the yes/no question appended to the answer prompt itself, asked first; the
    answer call that follows then reuses the evaluated passages (llama.cpp's context keeps them), so
    the decision costs the few tokens of the question rather than a second read of the passages."""
    state = {
        "standalone_question": item["question"],
        "context": context_of(item),
        "language": item["language"],
    }
    system, user = answer_prompt(state, strict=False)  # type: ignore[arg-type]
    llm.loaded().llama.reset()  # the previous item's prompt shares nothing; start cold, as a turn does
    started = time.perf_counter()
    p_yes = probability_yes(llm, system, f"{user}\n\n{load_prompt('passages_state_answer_suffix')}", None)
    gate_seconds = time.perf_counter() - started
    started = time.perf_counter()
    ask_with_first_token(llm, system, user, None, max_tokens=1)
    return {
        "p_answer": p_yes,
        "seconds": gate_seconds,
        "answer_call_after_seconds": time.perf_counter() - started,
    }


def score_item(llm: Any, item: dict[str, Any]) -> dict[str, Any]:
    """Every method's score on one item, with its seconds and tokens."""
    state = {
        "standalone_question": item["question"],
        "context": context_of(item),
        "language": item["language"],
    }
    scores: dict[str, Any] = {}
    system, user = answer_prompt(state, strict=False)  # type: ignore[arg-type]
    started = time.perf_counter()
    text, alternatives = ask_with_first_token(llm, system, user, None, max_tokens=1)
    seconds = time.perf_counter() - started
    p_refuse = probability_of_opening(alternatives or [], (NOT_FOUND,))
    scores["generator_argmax"] = {
        "answer": not NOT_FOUND.startswith(text.strip().upper() or "-"),
        "seconds": seconds,
    }
    scores["generator_p_refuse"] = {"p_answer": 1.0 - p_refuse, "seconds": seconds, "first_token": text}

    system, yes_no_user = answerable_prompt(state)  # type: ignore[arg-type]  # the graph's own
    started = time.perf_counter()
    p_yes = probability_yes(llm, system, yes_no_user, None)
    scores["yes_no_logprob"] = {"p_answer": p_yes, "seconds": time.perf_counter() - started}
    started = time.perf_counter()
    judgement, error = ask_structured(llm, AnswerStated, system, yes_no_user, None)
    scores["yes_no_json"] = {
        "answer": judgement.answer_stated if judgement else None,
        "error": error,
        "seconds": time.perf_counter() - started,
    }
    return scores


def decisions(
    rows: list[dict[str, Any]], method: str, cutoffs: dict[str, float] | None
) -> list[tuple[bool, bool]]:
    """(labelled answerable, judged answerable) per row, with the row's language's cut-off; an
    unreadable score counts as answerable (the generator answers then, as today)."""
    out = []
    for row in rows:
        score = row["scores"][method]
        if "p_answer" in score:
            cutoff = (cutoffs or {}).get(row["language"], 0.0)
            judged = score["p_answer"] is None or score["p_answer"] >= cutoff
        else:
            judged = score["answer"] is not False
        out.append((row["answerable"], judged))
    return out


def metrics(pairs: list[tuple[bool, bool]]) -> dict[str, Any]:
    positives = [j for label, j in pairs if label]
    negatives = [j for label, j in pairs if not label]
    kept = sum(positives) / len(positives) if positives else None
    rejected = sum(not j for j in negatives) / len(negatives) if negatives else None
    accuracy = sum(label == j for label, j in pairs) / len(pairs) if pairs else None
    return {
        "items": len(pairs),
        "answerable_kept": kept,
        "unanswerable_rejected": rejected,
        "accuracy": accuracy,
    }


def roc_auc(rows: list[dict[str, Any]], method: str) -> float | None:
    """How well P(answer) ranks answerable above unanswerable items (0.5 = chance), unread scores 0.5."""
    scored = [(r["answerable"], r["scores"][method]["p_answer"]) for r in rows]
    positives = [0.5 if p is None else p for label, p in scored if label]
    negatives = [0.5 if p is None else p for label, p in scored if not label]
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 3)


def calibrate(rows: list[dict[str, Any]], method: str, keep: float) -> float:
    """The highest cut-off on P(answer) that still keeps ``keep`` of the answerable rows."""
    answerable = sorted(
        r["scores"][method]["p_answer"]
        for r in rows
        if r["answerable"] and r["scores"][method]["p_answer"] is not None
    )
    if not answerable:
        return 0.0
    allowed_losses = int(len(answerable) * (1 - keep))
    return answerable[allowed_losses]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20, help="SQuAD questions per split")
    parser.add_argument("--keep", type=float, default=0.95, help="answerable share a cut-off must keep")
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()

    from core.settings import load_settings
    from tools.providers.chat_local import LocalLlamaChatModel

    settings = load_settings()
    # No prompt-state cache: each call evaluates its whole prompt, so the seconds compare fairly.
    llm = LocalLlamaChatModel.from_settings(settings).model_copy(update={"prompt_cache_mb": 0})
    partial = partial_path(OUT.stem)
    if args.fresh:
        partial.unlink(missing_ok=True)
    done = {}
    if partial.is_file():
        for line in partial.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            done[(row["split"], row["id"])] = row
    rows: dict[str, list[dict[str, Any]]] = {}
    for split in SPLITS:
        items = split_items(split, args.count)
        rows[split] = []
        for n, item in enumerate(items, start=1):
            row = done.get((split, item["id"]))
            if row is None:
                row = {"split": split, "id": item["id"], "language": item["language"],
                       "answerable": item["answerable"], "scores": score_item(llm, item)}  # fmt: skip
                with partial.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                print(f"{split} {n}/{len(items)} {item['id']}", flush=True)
            if "generator_yes_no" not in row["scores"]:  # added after the first run: scored in a second pass
                row["scores"]["generator_yes_no"] = score_shared_prefix(llm, item)
                with partial.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                print(f"{split} {n}/{len(items)} {item['id']} (generator_yes_no)", flush=True)
            rows[split].append(row)

    # Per language: the model's P(yes) runs higher on Chinese passages (negatives ~0.45, English ~0.2).
    cutoffs = {
        m: {
            lang: calibrate([r for r in rows["calibration"] if r["language"] == lang], m, args.keep)
            for lang in LANGUAGES
        }
        for m in SCORED
    }
    report: dict[str, Any] = {
        "command": "python -m bench.answerable_gate",
        "keep_target": args.keep,
        "cutoffs": cutoffs,
    }
    for split, split_rows in rows.items():
        report[split] = {}
        for method in METHODS:
            by_language = {}
            for language in LANGUAGES:
                in_language = [r for r in split_rows if r["language"] == language]
                by_language[language] = metrics(decisions(in_language, method, cutoffs.get(method)))
                by_language[language]["roc_auc"] = roc_auc(in_language, method) if method in cutoffs else None
            seconds = [r["scores"][method]["seconds"] for r in split_rows]
            report[split][method] = {
                "all": metrics(decisions(split_rows, method, cutoffs.get(method))),
                **by_language,
                "seconds_mean": round(sum(seconds) / len(seconds), 3),
                "extra_calls": 0 if method in ("generator_argmax", "generator_p_refuse") else 1,
            }
    report["json_errors"] = sum(
        1 for r in rows["report"] + rows["calibration"] if r["scores"]["yes_no_json"]["error"]
    )
    report["load_average_at_end"] = os.getloadavg()[0]
    report["rows"] = rows
    OUT.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    for method in METHODS:
        print(method, json.dumps({lang: report["report"][method][lang] for lang in LANGUAGES}))
    print(f"cut-offs {cutoffs}; saved {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
