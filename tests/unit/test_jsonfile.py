"""The store's small JSON files: written whole or not at all, read back as one object."""

from __future__ import annotations

from pathlib import Path

import pytest
from hymem.core.errors import StoreCorruptedError
from hymem.indexes.jsonfile import read_json, write_json_atomic


def test_a_written_object_reads_back_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_json_atomic(path, {"rows": 3, "name": "ünï"})
    write_json_atomic(path, {"rows": 4})
    assert read_json(path) == {"rows": 4}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_no_file_is_none(tmp_path: Path) -> None:
    assert read_json(tmp_path / "missing.json") is None


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"\xff\xfe{}"])
def test_a_damaged_file_is_a_corrupted_store_naming_it(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "journal.json"
    path.write_bytes(raw)
    with pytest.raises(StoreCorruptedError, match=r"journal\.json"):
        read_json(path)
