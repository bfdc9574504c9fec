"""Issue 28 ("the first hour"), case 10: a LongMemEval run with `--limit` warns only about the
loader's skips that concern the questions it selected, so its log and its report's "Skipped"
section agree."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.evaluation.longmemeval.runner import LmeOptions, run_longmemeval

from tests.log_events import capture_events

pytestmark = pytest.mark.integration

Variant = Callable[[Callable[[list[dict[str, Any]]], None]], Path]


def _damage(data: list[dict[str, Any]]) -> None:
    """One bad session date in the 3rd question and one empty turn in the 4th; the 1st and
    2nd questions are intact."""
    data[2]["haystack_dates"][1] = "2023/06/08 11:40"
    data[3]["haystack_sessions"][0][0]["content"] = " "


def _run(dataset: Path, out: Path, limit: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    with capture_events() as events:
        run_longmemeval(
            LmeOptions(
                dataset=dataset,
                out=out,
                limit=limit,
                systems=["hymem-summary", "bm25-session"],
                dashboard=False,
            ),
            MemoryConfig.defaults(embedder="hashing"),
            embedder=HashingEmbedder(256),
            show_progress=False,
        )
    warned = [e for e in events if e["event"] == "longmemeval.skip"]
    return warned, json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_limit_warns_only_about_the_selected_questions_skips(
    tmp_path: Path, lme_variant: Variant
) -> None:
    dataset = lme_variant(_damage)
    warned, summary = _run(dataset, tmp_path / "first-two", limit=2)
    assert warned == []  # the damage is in questions 3 and 4, which --limit 2 left out
    assert summary["skipped"] | {"details": []} == {
        "questions": 0,
        "sessions": 0,
        "turns": 0,
        "details": [],
    }
    report = (tmp_path / "first-two" / "report.md").read_text(encoding="utf-8")
    assert "sessions left out of selected questions (bad date, repeated verbatim): 0" in report

    warned, summary = _run(dataset, tmp_path / "first-four", limit=4)
    assert [(e["kind"], e["question_id"]) for e in warned] == [
        ("session", "q_ku_03"),
        ("turn", "q_tr_04"),
    ]
    assert (summary["skipped"]["sessions"], summary["skipped"]["turns"]) == (1, 1)
