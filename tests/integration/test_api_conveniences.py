"""Small things users trip on (issue 14 part 7), on the real store: `add("text")` is one user
message, `sleep()` returns an exported `SleepReport`, `traces()` returns typed `Trace` records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hymem import InvalidMessageError, Memory, MemoryConfig

from tests.bag_embedder import BagEmbedder

pytestmark = pytest.mark.integration


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "m", config=MemoryConfig.defaults(), embedder=BagEmbedder()) as m:
        yield m


def test_add_plain_text_is_one_user_turn(mem: Memory) -> None:
    result = mem.add("I adopted a golden retriever named Oscar.", user_id="ann")
    (turn,) = mem.pending(user_id="ann")
    assert result.turn_ids == [turn.id]
    assert (turn.speaker, turn.text) == ("user", "I adopted a golden retriever named Oscar.")


def test_add_blank_text_writes_nothing(mem: Memory) -> None:
    with pytest.raises(InvalidMessageError):
        mem.add("   ", user_id="ann")
    assert mem.pending(user_id="ann") == []


def test_sleep_returns_the_exported_report(mem: Memory) -> None:
    from hymem import SleepReport

    mem.add(
        [{"speaker": "Ann", "text": f"I adopted a cat named Tom number {i}."} for i in range(3)],
        user_id="ann",
    )
    mem.flush(user_id="ann")
    report = mem.sleep(user_id="ann")
    assert isinstance(report, SleepReport)
    assert report.users == ["ann"] and report.summaries_scanned > 0
    assert SleepReport.model_validate_json(report.model_dump_json()) == report
