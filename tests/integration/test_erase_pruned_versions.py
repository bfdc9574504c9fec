"""A read on a table version an erasure pruned under it (real LanceDB, two connections to one
folder as two workers have): the read runs again on the newest version instead of reporting the
store damaged; a file missing from the newest version is still damage. (A commit meeting the
same, the race in `test_erase_shard_neighbours.py`, goes through the same retry.)"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from hymem.indexes.lance import upkeep
from hymem.indexes.lance.tables import LanceTables

pytestmark = pytest.mark.integration

SCHEMA = pa.schema([pa.field("user_id", pa.string()), pa.field("text", pa.string())])


def _rows(user: str, n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {"user_id": [user] * n, "text": [f"{user} note {i}" for i in range(start, start + n)]},
        schema=SCHEMA,
    )


def _stale_neighbour(tmp_path: Path) -> LanceTables:
    """A neighbour's connection that re-checks the newest version only every hour (an
    object-store worker between two `refresh_s` checks), left on the version an erasure by
    another connection then prunes."""
    eraser = LanceTables(tmp_path / "db", read_only=False)
    eraser.ensure("notes", SCHEMA)
    for _ in range(3):  # several fragments, several versions
        eraser.add("notes", _rows("alice", 2))
        eraser.add("notes", _rows("bob", 2))
    neighbour = LanceTables(tmp_path / "db", read_only=False, refresh=timedelta(hours=1))
    assert neighbour.open_existing("notes")
    assert neighbour.count("notes") == 12  # its handle now sits on this version
    eraser.delete("notes", "user_id = 'alice'")
    upkeep.purge_deleted(eraser, "notes", keep=timedelta(0), unverified=True)
    return neighbour


def test_a_read_on_a_pruned_version_runs_again_on_the_newest(tmp_path: Path) -> None:
    neighbour = _stale_neighbour(tmp_path)
    rows = neighbour.rows("notes", "user_id = 'bob'")
    assert sorted(r["text"] for r in rows) == sorted(f"bob note {i}" for i in (0, 1) * 3)
    assert neighbour.count("notes", "user_id = 'alice'") == 0


def test_a_file_missing_from_the_newest_version_is_still_an_error(tmp_path: Path) -> None:
    neighbour = _stale_neighbour(tmp_path)
    for data in (tmp_path / "db" / "notes.lance" / "data").glob("*.lance"):
        data.unlink()
    with pytest.raises(RuntimeError, match="Not found"):  # the store maps it to damage
        neighbour.rows("notes", None)
