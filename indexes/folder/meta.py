"""A folder's identity on open: `meta.json` read and checked, then the tables opened through the
shared `store.meta.MetaKeeper` (which keeps the file and its `meta` table copy in step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hymem.core.errors import StoreCorruptedError, StoreError
from hymem.indexes.folder.lock import META_FILE
from hymem.indexes.jsonfile import read_json
from hymem.indexes.lance.table_state import TableState
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.store.meta import MetaKeeper


def read_meta_file(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(meta.json, None), or (None, why it cannot be read); (None, None) when there is none."""
    try:
        return read_json(folder / META_FILE), None
    except StoreCorruptedError as exc:
        return None, str(exc)


def open_folder(
    folder: Path, *, read_only: bool, embedder_name: str, dim: int
) -> tuple[LanceTables, dict[str, Any], bool]:
    """Check the folder's meta and open its tables: (tables, meta, created). A missing or
    rolled-back table is damage to report before any table is (re)created, never something to
    paper over with an empty one (`table_state`)."""
    meta, damage = read_meta_file(folder)
    if meta is None and read_only and not (folder / "lance").is_dir():
        raise StoreError(f"no hymem memory at {folder} to open read-only")
    lance = LanceTables(folder / "lance", read_only=read_only)
    keeper = MetaKeeper(
        folder,
        lance,
        read_only=read_only,
        embedder_name=embedder_name,
        dim=dim,
        meta_file=folder / META_FILE,
    )
    if meta is not None:
        keeper.check(meta)
    TableState(folder, lance).check()
    meta, created = keeper.open(meta, damage)
    return lance, keeper.upgrade(meta), created


__all__ = ["open_folder", "read_meta_file"]
