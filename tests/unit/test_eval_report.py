"""summary.json / report.md construction from scored predictions (pure)."""

from __future__ import annotations

import pytest
from hymem.evaluation.predictions import PredictionRecord
from hymem.evaluation.report import EXTRACTIVE_LABEL, build_summary, render_report


def rec(system: str, idx: int, category: int, f1: float, **kw: object) -> PredictionRecord:
    base = {
        "system": system,
        "conversation": "c1",
        "qa_index": idx,
        "category": category,
        "question": f"q{idx}",
        "gold": "g",
        "prediction": "p",
        "f1": f1,
        "bleu1": f1 / 2,
    }
    base.update(kw)
    return PredictionRecord.model_validate(base)


RECORDS = [
    rec(
        "hymem",
        0,
        4,
        1.0,
        path="light",
        escalated=False,
        light_calls=1,
        latency_ms=10.0,
        evidence_recall=1.0,
        context_tokens=100,
        tokens=0,
    ),
    rec(
        "hymem",
        1,
        4,
        0.5,
        path="deep",
        escalated=True,
        light_calls=1,
        deep_calls=2,
        latency_ms=30.0,
        evidence_recall=0.0,
        context_tokens=300,
    ),
    rec(
        "hymem",
        2,
        2,
        0.0,
        path="deep",
        escalated=True,
        light_calls=2,
        deep_calls=4,
        latency_ms=50.0,
        evidence_recall=None,
        context_tokens=200,
    ),
    rec(
        "full-context",
        0,
        4,
        1.0,
        path="none",
        deep_calls=1,
        latency_ms=100.0,
        evidence_recall=1.0,
        context_tokens=5000,
    ),
]
INGEST = [
    {
        "conversation": "c1",
        "turns": 10,
        "segments": 3,
        "summaries": 6,
        "calls": 0,
        "tokens": 0,
        "seconds": 2.0,
        "usage": {},
    }
]


def summary() -> dict:
    return build_summary(
        RECORDS,
        ingest=INGEST,
        manifest={"backend": "extractive", "embedder": "hashing-256"},
        retrieval={
            "questions": 2,
            "rows": [
                {
                    "level": "summary",
                    "mode": "hybrid",
                    "k": 5,
                    "recall": 0.5,
                    "tokens": 40.0,
                    "n": 2,
                    "by_category": {},
                },
                {
                    "level": "summary",
                    "mode": "hybrid",
                    "k": 10,
                    "recall": 0.75,
                    "n": 2,
                    "by_category": {},
                },
            ],
        },
    )


def test_summary_numbers_per_system() -> None:
    s = summary()
    h = s["systems"]["hymem"]
    assert h["n"] == 3
    assert h["f1"]["overall"] == pytest.approx(0.5)
    assert h["f1"]["single_hop"] == pytest.approx(0.75)
    assert h["f1"]["temporal"] == 0.0
    assert h["escalation_rate"] == pytest.approx(2 / 3)
    assert h["escalation_by_category"] == {"temporal": 1.0, "single_hop": 0.5}
    assert h["light_calls_per_q"] == pytest.approx(4 / 3)
    assert h["deep_calls_per_q"] == pytest.approx(2.0)
    assert h["latency_p50_ms"] == 30.0
    assert h["latency_p95_ms"] == pytest.approx(48.0)
    assert h["evidence_recall"]["overall"] == 0.5  # the None is left out
    assert h["judge"] is None
    assert h["avg_context_tokens"] == 200
    fc = s["systems"]["full-context"]
    assert fc["escalation_rate"] is None  # baselines have no escalation
    assert s["construction"]["mean"]["seconds"] == 2.0
    assert s["label"] == EXTRACTIVE_LABEL and s["extractive"] is True


def test_report_is_table1_shaped_and_labelled_extractive() -> None:
    md = render_report(summary())
    assert md.startswith(f"# LoCoMo evaluation — {EXTRACTIVE_LABEL}")
    assert "not from a language model" in md
    header = (
        "| System | Avg context tokens | Single Hop | Multi Hop | Open Domain | Temporal "
        "| Overall | n |"
    )
    assert header in md
    assert "| hymem | 200 | 75.00 | – | – | 0.00 | 50.00 | 3 |" in md
    assert "| full-context | 5,000 | 100.00 | – | – | – | 100.00 | 1 |" in md
    # Every recall beside its tokens; a row from before tokens were recorded shows "–".
    assert "| summary | hybrid | 50.00 | 40 | 75.00 | – |" in md
    assert "| c1 | 10 | 3 | 6 | 0 | 0 | 2.0 |" in md
    assert "judge" not in md.split("## Cost")[0].lower().replace("llm-judge", "")


def test_report_for_llm_backend_has_judge_table_and_no_extractive_label() -> None:
    recs = [
        rec("hymem", 0, 4, 1.0, judge_correct=True, judge_label="CORRECT"),
        rec("hymem", 1, 1, 0.0, judge_correct=False, judge_label="WRONG"),
    ]
    s = build_summary(
        recs, ingest=[], manifest={"backend": "openai:m", "judge": "openai:j"}, retrieval=None
    )
    md = render_report(s)
    assert EXTRACTIVE_LABEL not in md
    assert "## LLM-judge accuracy (judge: openai:j) (openai:m)" in md
    assert s["systems"]["hymem"]["judge"]["overall"] == 0.5
    assert s["systems"]["hymem"]["judge"]["multi_hop"] == 0.0


@pytest.mark.parametrize(
    ("phrasing", "says"),
    [
        ("locomo", "Dates worded as LoCoMo's gold answers word them"),
        ("general", "Dates in hymem's own wording"),
        (None, None),
    ],
)
def test_report_says_how_dates_were_worded(phrasing: str | None, says: str | None) -> None:
    manifest = {"backend": "extractive", "embedder": "hashing-256", "phrasing": phrasing}
    s = build_summary(RECORDS, ingest=INGEST, manifest=manifest, retrieval=None)
    assert s["phrasing"] == phrasing
    md = render_report(s)
    if says is None:
        assert "Dates " not in md
    else:
        assert says in md.split("## F1")[0]


def test_the_report_of_an_extractive_run_names_extractive_cost() -> None:
    """Issue 49, item 15: no model ran, so no column says "Model"."""
    md = render_report(summary())
    assert "Extractive tokens/q" in md
    assert "| Extractive calls | Extractive tokens |" in md
    assert "Model calls" not in md and "Model tokens" not in md
