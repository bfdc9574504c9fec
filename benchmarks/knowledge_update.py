"""LongMemEval-S knowledge-update questions with write-time consolidation on and off (issue 30).

A knowledge-update question asks for a fact that changed during the history ("How many ...
now?"); its evidence holds the old and the new value. The measure is the share of those
questions whose light-path context (`Memory.context(depth="light")`, as `ask` reads it, at the
question's date) holds the *latest* evidence turn (the evidence turn of the latest session),
with `consolidate_on_write` on and off, each question ingested into both memories in the same
run. Beside it, for a sample of every other question type, the harness's own light-path figures
(session recall_all@5, turn recall_any@10) on and off: consolidation must not cost them.

    python benchmarks/knowledge_update.py [--others 1] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hymem import Memory, MemoryConfig
from hymem.evaluation.longmemeval.data import LmeQuestion, load_longmemeval
from hymem.evaluation.longmemeval.ingest import ingest_question
from hymem.evaluation.longmemeval.metrics import evidence_of
from hymem.evaluation.longmemeval.systems import QuestionRetriever, score_ranking
from lab_stores import LONGMEMEVAL
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

KU = "knowledge-update"
console = Console()


def latest_evidence_turn(q: LmeQuestion) -> str | None:
    """The evidence turn of the latest session that holds one."""
    latest = None
    for session in q.sessions_in_time_order():
        for turn in session.turns:
            if turn.has_answer:
                latest = turn.id
    return latest


def measure(q: LmeQuestion, mem: Memory) -> dict[str, Any]:
    retriever = QuestionRetriever(mem, q, rrf_k=mem.config.rrf_k)
    ranked = retriever.rank("hymem-light")
    record = score_ranking(q, evidence_of(q), ranked)
    latest = latest_evidence_turn(q)
    out: dict[str, Any] = {
        "type": q.question_type,
        "latest_held": latest is not None and latest in set(ranked.turn_ids),
        "tokens": sum(record.unit_tokens),
    }
    if "session" in record.metrics:
        out["session_recall_all@5"] = record.metrics["session"]["recall_all@5"]
    if "turn" in record.metrics:
        out["turn_recall_any@10"] = record.metrics["turn"]["recall_any@10"]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--others", type=int, default=1, help="questions of each other type")
    ap.add_argument("--limit", type=int, default=None, help="knowledge-update questions")
    args = ap.parse_args(argv)
    console.print(f"python benchmarks/knowledge_update.py {' '.join(argv or sys.argv[1:])}")
    console.print(f"started {time.strftime('%Y-%m-%dT%H:%M:%S')}")
    questions = [q for q in load_longmemeval(LONGMEMEVAL).questions if not q.abstention]
    ku = [q for q in questions if q.question_type == KU][: args.limit]
    picked: dict[str, int] = defaultdict(int)
    others = []
    for q in questions:
        if q.question_type != KU and picked[q.question_type] < args.others:
            picked[q.question_type] += 1
            others.append(q)
    rows: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
    with tempfile.TemporaryDirectory() as tmp, Progress(console=console) as bar:
        task = bar.add_task("ingest and measure", total=2 * len(ku + others))
        mems = {
            s: Memory(
                Path(tmp) / s,
                config=MemoryConfig(consolidate_on_write=s == "on", max_k=1000),
                create=True,
            )
            for s in rows
        }
        try:
            for q in ku + others:
                for setting, mem in mems.items():  # interleaved: same machine state
                    ingest_question(mem, q, on_turns=lambda n: None)
                    rows[setting].append(measure(q, mem))
                    bar.advance(task)
        finally:
            for mem in mems.values():
                mem.close()
    show(rows)


def show(rows: dict[str, list[dict[str, Any]]]) -> None:
    table = Table(title="LongMemEval-S dev: the light path with write-time consolidation")
    for col in (
        "questions",
        "n",
        "setting",
        "latest evidence held",
        "session r_all@5",
        "turn r_any@10",
        "tokens",
    ):
        table.add_column(col)
    for group, keep in (("knowledge-update", True), ("other types (sample)", False)):
        for setting, found in rows.items():
            sel = [r for r in found if (r["type"] == KU) == keep]
            if not sel:
                continue
            table.add_row(
                group,
                str(len(sel)),
                setting,
                f"{statistics.fmean(r['latest_held'] for r in sel):.3f}",
                _mean(sel, "session_recall_all@5"),
                _mean(sel, "turn_recall_any@10"),
                f"{statistics.fmean(r['tokens'] for r in sel):.0f}",
            )
    console.print(table)


def _mean(rows: list[dict[str, Any]], key: str) -> str:
    values = [r[key] for r in rows if key in r]
    return f"{statistics.fmean(values):.3f}" if values else "-"


if __name__ == "__main__":
    main()
