"""One objective that refusing everything cannot game, nor answering everything (issue 22, item 3): a
mixed set of answerable and unanswerable questions over one knowledge base.

Built from the shared benchmark files, English and Chinese, single- and multi-hop:

- **SQuAD** and **CMRC 2018** (single-hop, en / zh): a seeded sample of questions over the paragraphs of
  their articles. A seeded share of them is made unanswerable by removing from the knowledge base every
  paragraph that states its answer (so the article's other paragraphs, on the same topic, stay: the
  hard case). Only questions whose answer is specific enough to remove are chosen for that (at least
  4 characters in English, 2 in Chinese, stated in at most 3 paragraphs).
- **HotpotQA** (multi-hop, en): unanswerable by removing one of its two supporting paragraphs (the
  one stating the answer when one does).
- **RGB** (news, zh): answerable with its positive passages; unanswerable with its negatives only
  (RGB's negative-rejection setting), after removing any passage that states the answer.

An answerable question must still have its answer stated somewhere in the final knowledge base, else
it is dropped; an unanswerable one whose answer another source's passage states is dropped too. Each question is assigned to the ``calibration`` or the ``report`` split by a seeded
draw (choose thresholds on one, report on the other). Outcome: an answerable question is right when the
answer is not refused and states the gold answer; an unanswerable one is right when it is refused.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from agent.eval.datasets import QADataset, QAExample, QAPassage, load_qa_dataset

UNANSWERABLE_SHARE = 0.4
REPORT_SHARE = 0.6
MAX_PARAGRAPHS_STATING_ANSWER = 3
# Questions drawn per source (before the unanswerable share is taken and before unusable ones drop).
DEFAULT_SIZES = {"squad": 220, "cmrc": 180, "hotpotqa": 100, "rgb": 160}


def _states(text: str, aliases: Iterable[str]) -> bool:
    folded = text.casefold()
    return any(alias.casefold() in folded for alias in aliases if alias.strip())


def _aliases(example: QAExample) -> list[str]:
    return [alias for group in example.answers for alias in group]


def states_answer(text: str, example: QAExample) -> bool:
    """Whether ``text`` states one of the example's gold answers (case-folded substring)."""
    return _states(text, _aliases(example))


def _specific(example: QAExample) -> bool:
    shortest = 2 if example.language == "zh" else 4
    return all(len(alias.strip()) >= shortest for alias in _aliases(example))


def _tagged(example: QAExample, source: str, kind: str, answerable: bool) -> QAExample:
    return example.model_copy(
        update={"qid": f"{source}:{example.qid}", "kind": kind, "answerable": answerable, "source": source}
    )


def _remove_answer_bearing(
    dataset: QADataset, rng: random.Random, source: str, kind: str
) -> tuple[list[QAExample], list[QAPassage]]:
    """SQuAD-style sources: make a share unanswerable by removing the paragraphs stating the answer."""
    passages = list(dataset.passages)
    candidates = [
        e for e in dataset.examples
        if _specific(e) and 0 < sum(_states(p.text, _aliases(e)) for p in passages) <= MAX_PARAGRAPHS_STATING_ANSWER
    ]  # fmt: skip
    unanswerable = {
        e.qid
        for e in rng.sample(candidates, min(len(candidates), int(len(dataset.examples) * UNANSWERABLE_SHARE)))
    }
    removed = {
        p.doc_id
        for p in passages
        for e in dataset.examples
        if e.qid in unanswerable and _states(p.text, _aliases(e))
    }
    kept = [p for p in passages if p.doc_id not in removed]
    examples = []
    for example in dataset.examples:
        if example.qid in unanswerable:
            examples.append(_tagged(example, source, kind, answerable=False))
        elif any(_states(p.text, _aliases(example)) for p in kept):
            examples.append(_tagged(example, source, kind, answerable=True))
    return examples, kept


def _hotpot(dataset: QADataset, rng: random.Random) -> tuple[list[QAExample], list[QAPassage]]:
    by_title = {p.title: p for p in dataset.passages}
    chosen = set(
        rng.sample([e.qid for e in dataset.examples], int(len(dataset.examples) * UNANSWERABLE_SHARE))
    )
    removed: set[str] = set()
    for example in dataset.examples:
        if example.qid not in chosen:
            continue
        gold = [by_title[t] for t in example.gold_titles if t in by_title]
        stating = [p for p in gold if _states(p.text, _aliases(example))]
        removed.add((stating or gold[-1:])[0].doc_id)
    kept = [p for p in dataset.passages if p.doc_id not in removed]
    kept_ids = {p.doc_id for p in kept}
    examples = []
    for example in dataset.examples:
        gold_ids = {by_title[t].doc_id for t in example.gold_titles if t in by_title}
        if example.qid in chosen:
            examples.append(_tagged(example, "hotpotqa", "multi", answerable=False))
        elif gold_ids <= kept_ids:  # both hops still there (another question's removal may have hit one)
            examples.append(_tagged(example, "hotpotqa", "multi", answerable=True))
    return examples, kept


def _rgb(shared_data: Path, size: int, rng: random.Random) -> tuple[list[QAExample], list[QAPassage]]:
    path = shared_data / "rgb" / "zh_refine.json"
    full = load_qa_dataset(path, "rgb", limit=size, sample_seed=rng.randrange(1 << 30))
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    by_id = {str(record.get("id", i)): record for i, record in enumerate(records)}
    chosen = set(rng.sample([e.qid for e in full.examples], int(len(full.examples) * UNANSWERABLE_SHARE)))
    positives_removed = {
        " ".join(str(t).split()) for qid in chosen for t in by_id.get(qid, {}).get("positive", [])
    }
    unanswerable = [e for e in full.examples if e.qid in chosen]
    kept = [
        p for p in full.passages
        if " ".join(p.text.split()) not in positives_removed and not any(_states(p.text, _aliases(e)) for e in unanswerable)
    ]  # fmt: skip
    examples = []
    for example in full.examples:
        if example.qid in chosen:
            examples.append(_tagged(example, "rgb", "single", answerable=False))
        elif any(_states(p.text, _aliases(example)) for p in kept):
            examples.append(_tagged(example, "rgb", "single", answerable=True))
    return examples, kept


def build_mixed_set(shared_data: Path, *, seed: int = 0, sizes: dict[str, int] | None = None) -> QADataset:
    """The mixed set (see the module docstring) from the shared data folder; deterministic for a seed."""
    sizes = {**DEFAULT_SIZES, **(sizes or {})}
    rng = random.Random(seed)
    examples: list[QAExample] = []
    passages: dict[str, QAPassage] = {}

    def add(part: tuple[list[QAExample], list[QAPassage]]) -> None:
        examples.extend(part[0])
        for passage in part[1]:
            passages.setdefault(passage.doc_id, passage)

    squad = load_qa_dataset(
        shared_data / "squad" / "dev-v1.1.json.gz", "squad", limit=sizes["squad"], sample_seed=seed + 11
    )
    add(_remove_answer_bearing(squad, rng, "squad", "single"))
    cmrc = load_qa_dataset(
        shared_data / "cmrc2018" / "cmrc2018_trial.json", "squad", limit=sizes["cmrc"], sample_seed=seed + 13
    )
    add(_remove_answer_bearing(cmrc, rng, "cmrc", "single"))
    hotpot = load_qa_dataset(
        shared_data / "hotpotqa" / "hotpot_dev_distractor_first100.json", "hotpot", limit=sizes["hotpotqa"]
    )
    add(_hotpot(hotpot, rng))
    add(_rgb(shared_data, sizes["rgb"], rng))
    # An answer removed from its own source can still be stated by another source's passage (a HotpotQA
    # paragraph naming what the SQuAD question asks): such a question is answerable after all; drop it.
    texts = [p.text.casefold() for p in passages.values()]
    examples = [
        e for e in examples
        if e.answerable or not any(alias.casefold() in t for alias in _aliases(e) if alias.strip() for t in texts)
    ]  # fmt: skip
    split_rng = random.Random(seed + 1)
    examples = [
        e.model_copy(update={"split": "report" if split_rng.random() < REPORT_SHARE else "calibration"})
        for e in examples
    ]
    return QADataset(
        name=f"mixed-seed{seed}",
        format="mixed",
        path=shared_data,
        examples=examples,
        passages=list(passages.values()),
    )


def select_split(
    dataset: QADataset, split: str, limit: int | None = None, sources: Sequence[str] = ()
) -> QADataset:
    """The questions of one split ('calibration', 'report' or 'all'), optionally of some sources, the
    first ``limit`` of them (in a stable interleaved order so a partial run covers every source)."""
    chosen = [e for e in dataset.examples if split == "all" or e.split == split]
    if sources:
        chosen = [e for e in chosen if e.source in sources]
    by_source: dict[str, list[QAExample]] = {}
    for example in chosen:
        by_source.setdefault(example.source or "", []).append(example)
    interleaved: list[QAExample] = []
    queues = list(by_source.values())
    while any(queues):
        for queue in queues:
            if queue:
                interleaved.append(queue.pop(0))
    return dataset.model_copy(update={"examples": interleaved[:limit] if limit else interleaved})
