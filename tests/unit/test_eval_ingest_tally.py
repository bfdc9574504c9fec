"""The construction cost of a unit fed over several invocations (`ingest_tally`): each part's
returned adds are kept on disk and the last part reports their sum."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hymem.core.types import AddResult, RoleUsage, Usage
from hymem.evaluation.ingest_tally import IngestTally, partial_path
from hymem.evaluation.report import resumed_note


def wrote(segments: int, summaries: int, tokens: int) -> AddResult:
    usage = Usage()
    usage.add("summarise", RoleUsage(calls=1, prompt_tokens=tokens))
    return AddResult(
        segments_written=[f"seg-{i}" for i in range(segments)],
        summaries_written=[f"sum-{i}" for i in range(summaries)],
        usage=usage,
    )


def test_an_interrupted_part_is_kept_and_summed_by_the_next(tmp_path: Path) -> None:
    path = partial_path(tmp_path, "conv-1")
    first = IngestTally(path)
    with pytest.raises(KeyboardInterrupt), first.feeding():
        first.count(wrote(2, 3, 100))
        first.count(AddResult())  # an add that stored nothing and spent nothing
        raise KeyboardInterrupt  # mid-way through the next summariser call: not counted
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert (kept["parts"], kept["segments"], kept["seconds"]["ingest"] > 0) == (1, 2, True)

    second = IngestTally(path)
    with second.feeding():
        second.count(wrote(1, 1, 40))
        second.stop()
    assert second.fields() == {
        "segments": 3,
        "summaries": 4,
        "calls": 2,
        "tokens": 140,
        "usage": {"summarise": RoleUsage(calls=2, prompt_tokens=140).model_dump()},
        "parts": 2,
    }
    assert second.seconds("ingest") >= kept["seconds"]["ingest"]  # both parts' time
    second.finish()
    assert not path.exists() and not path.parent.exists()


def test_a_clean_feed_is_one_part_and_keeps_nothing_in_memory_only_mode() -> None:
    tally = IngestTally()
    with tally.feeding():
        tally.count(wrote(1, 2, 10))
        tally.stage("sleep")
        tally.spend(Usage(roles={"update": RoleUsage(calls=1, completion_tokens=5)}))
        tally.stop()
    fields = tally.fields()
    assert (fields["parts"], fields["calls"], fields["tokens"]) == (1, 2, 15)
    assert tally.seconds("sleep") >= 0 and tally.seconds("never") == 0


def test_the_report_names_resumed_units_only() -> None:
    assert resumed_note([]) == []
    note = " ".join(resumed_note(["conv-26"]))
    assert "Resumed after an interruption: conv-26." in note and "summed" in note
