"""Issue 28, the library side of a user's first hour: a mistyped path is an error, not a new
empty memory (cases 2); turns waiting in the buffer are said to be unsearchable, and
`flush_on_add` makes every add searchable at once (case 1). A real `Memory` on a tmp folder,
with the hashing embedder and the extractive backend."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from hymem import AsyncMemory, Memory, MemoryConfig
from hymem.core.errors import StoreError, UserInputError

CONFIG = MemoryConfig.defaults(embedder="hashing:64")
TURN = [{"speaker": "Ann", "text": "The quarterly report is due on Friday."}]


def test_a_missing_parent_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    path = tmp_path / "memdta" / "mem"
    with pytest.raises(StoreError) as err:
        Memory(path, config=CONFIG)
    assert str(path) in str(err.value) and "parent folder" in str(err.value)
    assert "create=True" in str(err.value)
    assert not (tmp_path / "memdta").exists()


def test_create_true_makes_the_missing_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "mem"
    with Memory(path, config=CONFIG, create=True) as mem:
        mem.add(TURN, user_id="ann")
    with Memory(path, config=CONFIG, create=False) as mem:
        assert len(mem.pending(user_id="ann")) == 1


def test_the_default_creates_inside_an_existing_folder(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", config=CONFIG) as mem:
        mem.add(TURN, user_id="ann")
    empty = tmp_path / "made-by-hand"
    empty.mkdir()
    with Memory(empty, config=CONFIG) as mem:  # an empty folder may become a memory
        assert mem.stats()["turns"] == 0


@pytest.mark.parametrize("how", [{"create": False}, {"read_only": True}])
def test_opening_what_holds_no_memory_is_refused_when_it_must_exist(
    tmp_path: Path, how: dict[str, bool]
) -> None:
    missing = tmp_path / "memdta"
    with pytest.raises(StoreError, match="no hymem memory at") as err:
        Memory(missing, config=CONFIG, **how)
    assert str(missing) in str(err.value) and "hymem add --store" in str(err.value)
    assert not missing.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(StoreError, match="no hymem memory at"):
        Memory(empty, config=CONFIG, **how)
    assert list(empty.iterdir()) == []


def test_create_true_with_read_only_is_a_caller_mistake(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="read_only"):
        Memory(tmp_path / "mem", config=CONFIG, read_only=True, create=True)


def test_async_memory_takes_create(tmp_path: Path) -> None:
    async def open_missing() -> None:
        async with AsyncMemory(tmp_path / "nope", config=CONFIG, create=False):
            pass

    with pytest.raises(StoreError, match="no hymem memory"):
        asyncio.run(open_missing())


def _pending_warnings(caplog: pytest.LogCaptureFixture) -> list[dict[str, object]]:
    return [
        r.hymem_event  # type: ignore[attr-defined]
        for r in caplog.records
        if r.name == "hymem.api.memory.pending"
    ]


def test_reads_that_find_nothing_say_turns_are_pending(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="hymem.api.memory.pending")
    with Memory(tmp_path / "mem", config=CONFIG) as mem:
        added = mem.add(TURN, user_id="ann")
        assert added.pending == 1
        assert mem.search("report due", user_id="ann") == []
        assert mem.context("When is the report due?", user_id="ann") == []
        assert not mem.ask("When is the report due?", user_id="ann").evidence
        events = _pending_warnings(caplog)
        assert [e["call"] for e in events] == ["search", "context", "ask"]
        assert all(e["pending"] == 1 and e["user_id"] == "ann" for e in events)
        assert "flush" in str(events[0]["hint"])

        caplog.clear()
        mem.flush(user_id="ann")
        assert mem.search("report due", user_id="ann")
        assert mem.search("zebra", user_id="bob") == []  # nothing pending: nothing said
        assert _pending_warnings(caplog) == []


def test_flush_on_add_makes_every_add_searchable(tmp_path: Path) -> None:
    config = MemoryConfig.defaults(embedder="hashing:64", flush_on_add=True)
    with Memory(tmp_path / "mem", config=config) as mem:
        first = mem.add(TURN, user_id="ann")
        assert first.pending == 0 and first.turn_ids and first.summaries_written
        assert first.segments_written and first.usage.roles["summarise"].calls == 1
        hits = mem.search("report due", user_id="ann")
        assert hits and "Friday" in hits[0].text
        second = mem.add("I moved to Lisbon in March", user_id="ann")
        assert second.pending == 0
        assert mem.search("Lisbon", user_id="ann")


def test_flush_on_add_is_off_by_default_and_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert MemoryConfig.defaults().flush_on_add is False
    monkeypatch.setenv("HYMEM_FLUSH_ON_ADD", "true")
    assert MemoryConfig().flush_on_add is True
    described = MemoryConfig.model_fields["flush_on_add"].description or ""
    assert "searchable" in described
    assert "flush_on_add" in (MemoryConfig.model_fields["buffer_tokens"].description or "")
