"""The on-disk journal: durable appends, reload, torn last lines, overrides."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hymem.indexes.folder.sleep_file import FileLines
from hymem.sleep.journal import JournalEntry, SleepJournal, queue_key

pytestmark = pytest.mark.integration


def _entry(target: str, key: str, action: str = "ignore", mark: int = 1) -> JournalEntry:
    return JournalEntry(
        user_id="u",
        target_id=target,
        key=key,
        action=action,  # type: ignore[arg-type]
        watermark=datetime(2026, 1, mark),
        at=datetime(2026, 2, 1),
    )


def test_appends_survive_reopen_and_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "mem" / "sleep" / "journal.jsonl"
    j = SleepJournal(FileLines(path))
    j.append([_entry("a", "k1", "update"), _entry("b", "k2")])
    j.close()
    with path.open("ab") as fh:
        fh.write(b'{"v": 1, "kind": "decision", "user_id": "u", "tar')  # killed mid-write
    j2 = SleepJournal(FileLines(path))
    assert j2.lookup("k1") is not None and j2.lookup("k1").action == "update"  # type: ignore[union-attr]
    assert len(j2) == 2
    j2.append([_entry("c", "k3")])  # must start on a fresh line
    j2.close()
    j3 = SleepJournal(FileLines(path))
    assert [j3.lookup(k) is not None for k in ("k1", "k2", "k3")] == [True, True, True]
    assert len(path.read_text().splitlines()) == 4


def test_last_entry_for_a_key_wins_and_overrides_do_not_move_watermarks(tmp_path: Path) -> None:
    j = SleepJournal(FileLines(tmp_path / "j.jsonl"))
    j.append([_entry("a", "k", "update", mark=1)])
    j.append([_entry("a", "k", "ignore", mark=5).model_copy(update={"kind": "override"})])
    assert j.lookup("k").action == "ignore"  # type: ignore[union-attr]
    assert j.watermark(["a"]) == datetime(2026, 1, 1)
    assert j.watermark(["zzz"]) is None
    assert [e.kind for e in j.for_target("a")] == ["decision", "override"]


def test_queue_key_depends_on_every_input() -> None:
    base = ("u", "t", "text", [("q1", "one"), ("q2", "two")], "openai:m")
    k = queue_key(*base)
    assert k == queue_key(*base)
    assert k != queue_key("v", *base[1:])
    assert k != queue_key("u", "t", "text!", base[3], "openai:m")
    assert k != queue_key("u", "t", "text", [("q2", "two"), ("q1", "one")], "openai:m")
    assert k != queue_key("u", "t", "text", [("q1", "one"), ("q2", "two!")], "openai:m")
    assert k != queue_key("u", "t", "text", base[3], "extractive")
