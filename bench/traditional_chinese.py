"""Traditional Chinese reading comprehension: CMRC 2018 questions no other run has used, written in
the Traditional script.

Users in Taiwan and Hong Kong ask in Traditional Chinese over Traditional documents, and expect the
answer in their script. No shared set is written that way, so this bench writes one: the CMRC 2018
trial file (questions, passages and gold answers alike) converted with OpenCC's ``s2tw`` dictionary
(Taiwan variants, no phrase rewriting, so a gold answer stays a span of its passage). The questions
are a seeded sample that leaves out every question of ``bench.qa``'s CMRC sample (seed 0, 200) and of
the mixed set, so nothing here was read while tuning. The converted file lives under ``--home``, not
in the repository.

With ``--documents simplified`` only the questions are converted: users who ask in Traditional over
documents written in Simplified (passages and gold answers as the shared file has them; the metrics
compare either script with the other).

    .venv/bin/python -m bench.traditional_chinese --limit 40 [--documents simplified] [--tag T] [--set graph.x=v] [--resume]

Saves ``bench/results/traditional_chinese[_over_simplified][_<tag>].json`` (the eval report: answer contained, char-F1,
refusals, per question); pair two runs with ``python -m bench.qa_compare A.json B.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.eval.shared_data import shared_data_dir  # noqa: E402
from bench.mixed_set import parse_overrides, save_run  # noqa: E402
from bench.partials import partial_path  # noqa: E402

DATA = shared_data_dir()
SOURCE = DATA / "cmrc2018" / "cmrc2018_trial.json"
SAMPLE_SEED = 22  # not 0: bench.qa's CMRC sample is seed 0
SAMPLED = 120  # sampled first; the questions other runs used are then left out


def traditional_copy(home: Path) -> Path:
    """The CMRC trial file in the Traditional script (written once under ``home``)."""
    from opencc_purepy import OpenCC

    path = home / "traditional" / "cmrc2018_trial_s2tw.json"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        text = OpenCC("s2tw").convert(SOURCE.read_text(encoding="utf-8"))
        json.loads(text)  # the conversion keeps the JSON valid (it only maps Han characters)
        path.write_text(text, encoding="utf-8")
    return path


def traditional_questions_copy(home: Path) -> Path:
    """The CMRC trial file with only its questions in the Traditional script (written once under ``home``)."""
    from opencc_purepy import OpenCC

    path = home / "traditional" / "cmrc2018_trial_questions_s2tw.json"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        s2tw = OpenCC("s2tw")
        data = json.loads(SOURCE.read_text(encoding="utf-8"))
        for article in data["data"]:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    qa["question"] = s2tw.convert(qa["question"])
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def used_elsewhere(home: Path) -> set[str]:
    """CMRC question ids other runs have read: bench.qa's seed-0 sample and the mixed set."""
    from agent.eval.datasets import load_qa_dataset

    used = {e.qid for e in load_qa_dataset(SOURCE, "squad", limit=200, sample_seed=0).examples}
    mixed = home / "mixed" / "mixed_seed0_all.json"
    if mixed.is_file():
        examples = json.loads(mixed.read_text(encoding="utf-8"))["examples"]
        used |= {e["qid"].removeprefix("cmrc:") for e in examples if e.get("source") == "cmrc"}
    return used


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=ROOT / ".ragpilot-bench")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--documents", choices=["traditional", "simplified"], default="traditional")
    parser.add_argument("--tag", default="")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=JSON")
    parser.add_argument("--qids", default="", help="comma-separated: only these of the selection")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)

    from agent.eval.datasets import load_qa_dataset
    from agent.eval.qa import QAEvalConfig, QuestionResult, qa_settings, run_qa_eval

    over_simplified = args.documents == "simplified"
    path = traditional_questions_copy(args.home) if over_simplified else traditional_copy(args.home)
    dataset = load_qa_dataset(path, "squad", limit=SAMPLED, sample_seed=SAMPLE_SEED)
    used = used_elsewhere(args.home)
    fresh = [e.qid for e in dataset.examples if e.qid not in used][: args.limit]
    if args.qids:
        fresh = [q for q in args.qids.split(",") if q in fresh]
    name = (
        "traditional_chinese"
        + ("_over_simplified" if over_simplified else "")
        + (f"_{args.tag}" if args.tag else "")
    )
    partial = partial_path(name)
    if not args.resume:
        partial.unlink(missing_ok=True)
    done = [
        QuestionResult.model_validate_json(line)
        for line in (partial.read_text(encoding="utf-8").splitlines() if partial.is_file() else [])
        if line.strip()
    ]

    def record(result: QuestionResult) -> None:
        with partial.open("a", encoding="utf-8") as f:
            f.write(result.model_dump_json() + "\n")

    config = QAEvalConfig(dataset=path, format="squad", limit=SAMPLED, sample_seed=SAMPLE_SEED, qids=fresh)
    settings = qa_settings(dataset, args.home, **parse_overrides(args.set))
    started = time.perf_counter()
    report = run_qa_eval(config, settings, progress=sys.stderr.isatty(), on_result=record, done=done)
    saved: dict[str, Any] = report.model_dump(mode="json")
    out = save_run(saved, name, "python -m bench.traditional_chinese", args.set, len(done), partial)
    print(json.dumps(saved["metrics"], ensure_ascii=False))
    print(f"saved {out} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
