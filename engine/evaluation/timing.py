"""Where a LoCoMo run's time goes: each invocation times its stages (setup, ingest, answers,
retrieval recall, traces, outputs) and appends one line to the run folder's timing.jsonl, with
how much of each stage it did and how much it reused from an earlier invocation. The report
prints them (`timing_section`), so a rerun that should take seconds shows which stage did not."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hymem.evaluation.markdown import fmt_num, md_table

FILENAME = "timing.jsonl"
STAGES: tuple[tuple[str, str], ...] = (
    ("setup", "Setup"),
    ("ingest", "Ingest"),
    ("answers", "Answers"),
    ("retrieval", "Retrieval recall"),
    ("traces", "Traces"),
    ("outputs", "Report + dashboard"),
)


class StageClock:
    """Laps of one invocation: `lap(name)` closes the stage that ran since the last lap."""

    def __init__(self) -> None:
        self.started = self._last = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def lap(self, stage: str) -> float:
        now = time.perf_counter()
        took = self.seconds[stage] = round(now - self._last, 3)
        self._last = now
        return took

    def row(self, **work: int) -> dict[str, Any]:
        """This invocation's timing.jsonl line: stage seconds, their total, and the work done."""
        return {
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "wall_seconds": round(sum(self.seconds.values()), 3),
            "stages": dict(self.seconds),
            **work,
        }


def append_timing(out: Path, row: Mapping[str, Any]) -> None:
    with (out / FILENAME).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


def read_timing(out: Path) -> list[dict[str, Any]]:
    """Every invocation's line; a torn last line (the process died mid-write) is skipped."""
    path = out / FILENAME
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def _work(row: Mapping[str, Any]) -> str:
    """What an invocation did and what it reused, in words."""
    return (
        f"fed {row.get('ingested', 0)} conversation(s); "
        f"asked {row.get('asked', 0)}, reused {row.get('answers_reused', 0)} answers; "
        f"recall scored {row.get('retrieval_computed', 0)}, "
        f"reused {row.get('retrieval_reused', 0)} questions"
    )


def timing_section(rows: Sequence[Mapping[str, Any]], shown: int = 5) -> list[str]:
    """The last `shown` invocations, one row each: seconds per stage, total, work done."""
    if not rows:
        return []
    header = ["Invocation", *[title for _, title in STAGES], "Total s", "Work"]
    body = [
        [
            f"{i} ({r.get('finished_at', '?')})",
            *[fmt_num((r.get("stages") or {}).get(stage)) for stage, _ in STAGES],
            fmt_num(r.get("wall_seconds")),
            _work(r),
        ]
        for i, r in list(enumerate(rows, 1))[-shown:]
    ]
    return [
        "## Run time by stage (seconds)",
        "",
        "One row per invocation into this folder. A rerun reuses what earlier ones finished: "
        "ingestion (`ingest/<id>.json`), answers (`predictions.jsonl`) and the retrieval-recall "
        "stage (`retrieval_questions.jsonl`, rescored when the configuration or the store "
        "changed), so its time should be setup, the BM25 index's rebuild (in ingest, about "
        "0.2 s per 1,000 summaries and segments) and report + dashboard only. The embedder "
        "loads on first use, inside the first stage that embeds (ingest on a first run; a "
        "rerun with nothing left to do never loads it). Times are wall clock, on whatever "
        "else the machine was running.",
        "",
        *md_table(header, body),
        "",
    ]


__all__ = [
    "FILENAME",
    "STAGES",
    "StageClock",
    "append_timing",
    "read_timing",
    "timing_section",
]
