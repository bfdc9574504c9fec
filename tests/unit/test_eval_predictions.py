"""predictions.jsonl: append-only, resumable, tolerant of a torn last line. Uses tmp_path
only as a file (no store, no models)."""

from __future__ import annotations

from pathlib import Path

from hymem.evaluation.predictions import PredictionLog, PredictionRecord, read_predictions


def rec(idx: int, system: str = "hymem") -> PredictionRecord:
    return PredictionRecord(
        system=system,
        conversation="c",
        qa_index=idx,
        category=4,
        question="q",
        gold="g",
        prediction="p",
        f1=0.0,
        bleu1=0.0,
    )


def test_append_skips_done_keys_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    log = PredictionLog(path)
    assert log.append(rec(0)) and log.append(rec(1)) and log.append(rec(0, "full-context"))
    assert not log.append(rec(0))  # already done: nothing written
    again = PredictionLog(path)
    assert again.done == {("hymem", "c", 0), ("hymem", "c", 1), ("full-context", "c", 0)}
    assert len(path.read_text().splitlines()) == 3


def test_torn_last_line_is_skipped_and_repaired(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    PredictionLog(path).append(rec(0))
    with path.open("a") as fh:
        fh.write(rec(1).model_dump_json()[:40])  # the process died mid-write
    log = PredictionLog(path)
    assert log.done == {("hymem", "c", 0)}
    assert log.append(rec(1))
    assert [r.qa_index for r in read_predictions(path)] == [0, 1]
