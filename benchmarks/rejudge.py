"""Judge a finished LoCoMo run's answers again with another judge, into a copy of the run.

Why: a run's answers cost minutes each with a local model; when the judge (or its prompt)
changes, the answers need not be made again. The copy holds the same predictions with the new
judge's labels, the run's manifest and ingest records (not its store), so
`benchmarks/local_model_compare.py` reads it as it reads a run.

    python benchmarks/rejudge.py RUN --judge gguf:PATH --out RUN-rejudged
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from hymem.core.config import MemoryConfig
from hymem.embed.embedders import resolve_embedder
from hymem.evaluation.predictions import read_predictions
from hymem.llm import build_roles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--judge", required=True, help="judge model spec (gguf:PATH, local, ...)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    records = read_predictions(args.run / "predictions.jsonl")
    if args.out.exists():
        parser.error(f"{args.out} exists")
    args.out.mkdir(parents=True)
    shutil.copytree(args.run / "ingest", args.out / "ingest")
    shutil.copy2(args.run / "manifest.json", args.out / "manifest.json")
    judge = build_roles(MemoryConfig(llm=args.judge), resolve_embedder("hashing"))
    started = time.perf_counter()
    changed = 0
    with (args.out / "predictions.jsonl").open("w", encoding="utf-8") as out:
        for rec in records:
            label = judge.judge(rec.question, rec.gold, rec.prediction).output.label
            changed += label != rec.judge_label
            rec = rec.model_copy(update={"judge_label": label, "judge_correct": label == "CORRECT"})
            out.write(rec.model_dump_json() + "\n")
    judge.close()
    correct = {s: 0 for s in {r.system for r in records}}
    total = dict.fromkeys(correct, 0)
    for rec in read_predictions(args.out / "predictions.jsonl"):
        total[rec.system] += 1
        correct[rec.system] += bool(rec.judge_correct)
    print(
        f"{len(records)} answers judged again in {time.perf_counter() - started:.0f} s; "
        f"{changed} labels changed"
    )
    for system in sorted(total):
        print(f"{system}: judge {100 * correct[system] / total[system]:.1f} % of {total[system]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
