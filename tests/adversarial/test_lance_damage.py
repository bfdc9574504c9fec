"""Damaged LanceDB data: a deleted table, lost newest manifests, a missing fragment. Each is a
typed `StoreCorruptedError` naming the table and what to run, never a raw error, a silent
rollback or an empty table; `hymem doctor` reports it and `hymem repair` restores the newest
readable version, says what was lost, and the raw turns rebuild what the summaries lost."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig, StoreCorruptedError
from hymem.cli import app
from hymem.indexes.folder.doctor import diagnose, repair
from hymem.testing import store_of
from typer.testing import CliRunner

pytestmark = pytest.mark.integration
CFG = MemoryConfig.defaults(embedder="hashing:64")
SESSIONS = [
    [("user", "I adopted a beagle named Rex"), ("assistant", "Lovely, how old is Rex?")],
    [("user", "Rex is three and loves the beach"), ("assistant", "Beaches are great for dogs")],
    [("user", "We moved to Porto in June"), ("assistant", "Porto is a beautiful city")],
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Three sessions, each flushed in its own commit."""
    with Memory(tmp_path / "m", config=CFG) as mem:
        for n, session in enumerate(SESSIONS):
            msgs = [{"role": r, "content": c} for r, c in session]
            mem.add(msgs, user_id="u", session_id=f"s{n}")
            mem.flush(user_id="u")
    return tmp_path / "m"


def _counts(folder: Path) -> dict[str, int]:
    with Memory(folder, config=CFG) as mem:
        return mem.stats(user_id="u")


def _manifests(table: Path) -> list[Path]:
    """Newest first (LanceDB names manifests u64::MAX - version)."""
    return sorted((table / "_versions").glob("*.manifest"))


@pytest.fixture
def opened() -> Iterator[list[Memory]]:
    mems: list[Memory] = []
    yield mems
    for m in mems:
        m.close()


def test_a_deleted_table_is_reported_then_rebuilt_from_the_turns(folder: Path) -> None:
    """Before: a writer open silently recreated the table empty (summaries 107 -> 0)."""
    before = _counts(folder)
    shutil.rmtree(folder / "lance" / "summaries.lance")
    for read_only in (False, True):
        with pytest.raises(StoreCorruptedError, match=r"'summaries' is missing.*hymem repair"):
            Memory(folder, config=CFG, read_only=read_only)
    found = diagnose(folder)
    assert not found.healthy
    assert [t.problem() for t in found.tables if t.name == "summaries"] == ["missing"]

    report = repair(folder)
    summaries = next(t for t in report.tables if t.name == "summaries")
    assert summaries.action == "recreated empty" and summaries.rows_lost == before["summaries"]
    assert report.turns_pending == before["turns"]  # their summaries went: pending again
    with Memory(folder, config=CFG) as mem:
        assert mem.flush(user_id="u").pending == 0  # the raw dialogue rebuilds the summaries
        after = mem.stats(user_id="u")
        assert after["summaries"] > 0 and after["pending_turns"] == 0
        assert mem.search("beagle", user_id="u", mode="lexical")
    assert diagnose(folder).healthy


def test_lost_newest_manifests_are_not_a_silent_rollback(folder: Path) -> None:
    newest = _manifests(folder / "lance" / "segments.lance")[0]
    newest.unlink()
    with pytest.raises(StoreCorruptedError, match=r"'segments' is at version .*hymem repair"):
        Memory(folder, config=CFG)
    report = repair(folder)
    seg = next(t for t in report.tables if t.name == "segments")
    assert seg.action == "restored"
    with Memory(folder, config=CFG) as mem:
        mem.flush(user_id="u")
        stats = mem.stats(user_id="u")
        assert stats["pending_turns"] == 0 and stats["segments"] >= 1
    assert diagnose(folder).healthy


def test_a_missing_fragment_is_a_typed_error_and_repairable(
    folder: Path, opened: list[Memory]
) -> None:
    """Before: a raw RuntimeError('lance error: ...') on every call."""
    data = sorted((folder / "lance" / "summaries.lance" / "data").glob("*.lance"))
    newest = max(data, key=lambda p: p.stat().st_mtime_ns)
    newest.unlink()
    for read_only in (True, False):  # on open, or on the first read of the fragment
        with pytest.raises(StoreCorruptedError, match="hymem doctor"):
            mem = Memory(folder, config=CFG, read_only=read_only)
            opened.append(mem)
            store_of(mem).get_summaries("u")
    for mem in opened:
        mem.close()
    found = diagnose(folder)
    assert any((t.problem() or "").startswith("unreadable") for t in found.tables)
    report = repair(folder)
    assert next(t for t in report.tables if t.name == "summaries").action == "restored"
    with Memory(folder, config=CFG) as mem:
        mem.flush(user_id="u")
        assert store_of(mem).get_summaries("u") and mem.stats(user_id="u")["pending_turns"] == 0
    assert diagnose(folder).healthy


def test_doctor_and_repair_commands(folder: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["doctor", "-s", str(folder)])
    assert ok.exit_code == 0 and "healthy" in ok.output
    shutil.rmtree(folder / "lance" / "segments.lance")
    bad = runner.invoke(app, ["doctor", "-s", str(folder)])
    assert bad.exit_code == 1 and "missing" in bad.output
    fixed = runner.invoke(app, ["repair", "-s", str(folder)])
    assert fixed.exit_code == 0, fixed.output
    assert "recreated empty" in fixed.output and "pending again" in fixed.output
    assert runner.invoke(app, ["doctor", "-s", str(folder)]).exit_code == 0


@pytest.mark.parametrize("what", ["manifest", "fragment"])
def test_truncated_files_are_typed_errors_and_repairable(
    folder: Path, what: str, opened: list[Memory]
) -> None:
    """Before: raw RuntimeErrors on open or on every call."""
    table = folder / "lance" / "summaries.lance"
    if what == "manifest":
        victim = _manifests(table)[0]
    else:
        victim = max((table / "data").glob("*.lance"), key=lambda p: p.stat().st_mtime_ns)
    with victim.open("r+b") as fh:
        fh.truncate(16)
    with pytest.raises(StoreCorruptedError, match="hymem"):
        mem = Memory(folder, config=CFG, read_only=True)
        opened.append(mem)
        store_of(mem).get_summaries("u")
        mem.search("beagle", user_id="u")
    for mem in opened:
        mem.close()
    assert not diagnose(folder).healthy
    repair(folder)
    with Memory(folder, config=CFG) as mem:
        mem.flush(user_id="u")
        assert mem.stats(user_id="u")["pending_turns"] == 0
        assert store_of(mem).get_summaries("u")
    assert diagnose(folder).healthy
