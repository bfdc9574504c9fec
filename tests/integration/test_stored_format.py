"""The stored format holds: a memory folder written by the 0.2 release (tests/data/store_v02,
built by tests/data/make_store_v02.py) opens with today's code, for writing and read-only, and
serves the same counts, listings and search results the release recorded beside it.

A failure here means stores in the field would break or answer differently: fix the code (or
add a migration), never the fixture."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import SchemaVersionError
from hymem.embed.embedders import SentenceTransformerEmbedder

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURE = DATA / "store_v02"
EXPECTED: dict[str, Any] = json.loads((DATA / "store_v02_expected.json").read_text())
LEVELS = ("turn", "segment", "summary")


def _record(item: Any) -> dict[str, Any]:
    status = getattr(item, "status", None)
    return {"id": item.id, "text": item.text, "status": getattr(status, "value", status)}


def _listing(mem: Memory, user_id: str, level: str) -> list[dict[str, Any]]:
    page = mem.get_all(user_id=user_id, level=level, status="all", limit=1000)  # type: ignore[arg-type]
    assert page.next_cursor is None
    return [_record(item) for item in page.items]


def _hits(mem: Memory, user_id: str, query: str) -> list[dict[str, Any]]:
    return [{"id": h.id, "text": h.text} for h in mem.search(query, user_id=user_id, k=5)]


def _assert_serves_the_release(mem: Memory) -> None:
    for user_id, counts in EXPECTED["counts"].items():
        assert mem.stats(user_id=user_id) == counts, user_id
        for level in LEVELS:
            assert _listing(mem, user_id, level) == EXPECTED["listings"][user_id][level], (
                user_id,
                level,
            )
    for case in EXPECTED["search"]:
        assert _hits(mem, case["user_id"], case["query"]) == case["hits"], case["query"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the fixture: opening may upgrade or lock it, never the committed one."""
    return Path(shutil.copytree(FIXTURE, tmp_path / "store_v02"))


@pytest.fixture
def config() -> MemoryConfig:
    return MemoryConfig.defaults(**EXPECTED["written_by"]["settings"])


def test_the_fixture_is_small_and_complete() -> None:
    files = [p for p in FIXTURE.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 1_000_000
    assert {"meta.json", "tables.json"} <= {p.name for p in files}
    assert set(EXPECTED["counts"]) == {"alice", "bob"} and len(EXPECTED["search"]) == 3
    assert all(case["hits"] for case in EXPECTED["search"])


def test_a_release_store_opens_and_serves_the_same_results(
    folder: Path, config: MemoryConfig, minilm: SentenceTransformerEmbedder
) -> None:
    with Memory(folder, config=config, embedder=minilm) as mem:
        _assert_serves_the_release(mem)
        # and it keeps working as a store: a new user's turns are written beside the old ones
        mem.add("I collect vintage postcards from Lisbon.", user_id="carol", session_id="c1")
        assert mem.flush(user_id="carol").error is None
        assert mem.stats(user_id="carol")["turns"] == 1
        assert mem.stats(user_id="alice") == EXPECTED["counts"]["alice"]
    with Memory(folder, config=config, embedder=minilm) as reopened:
        _assert_serves_the_release(reopened)


def test_a_release_store_opens_read_only(
    folder: Path, config: MemoryConfig, minilm: SentenceTransformerEmbedder
) -> None:
    # Schema 5 (issue 30): a reader cannot upgrade, so it names the command that does ...
    with pytest.raises(SchemaVersionError, match="hymem upgrade"):
        Memory(folder, config=config, embedder=minilm, read_only=True)
    with Memory(folder, config=config, embedder=minilm):  # ... and one writer's open upgrades
        pass
    with Memory(folder, config=config, embedder=minilm, read_only=True) as mem:
        _assert_serves_the_release(mem)
