"""The store folder's identity: `meta.json`, its mirror in the `meta` table, and the tables.

`meta.json` says which schema version, embedder and dimension built the folder; opening it with
others is refused (`lock.check_meta`). The `meta` table holds a copy, so a lost or garbage
meta.json is never fatal: a writer puts the file back from the copy, a reader reads the copy and
writes nothing, and both check it like the file. Only a folder that lost both is a
`StoreCorruptedError`: guessing its embedder would mix vector spaces silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from hymem.errors import SchemaVersionError, StoreCorruptedError, StoreError
from hymem.indexes.folder.lock import META_FILE, check_meta, meta_from_rows, new_meta, read_json
from hymem.indexes.folder.lock import write_json_atomic as _write_json
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.migrate import can_migrate, migrate
from hymem.indexes.lance.tables import LanceTables
from hymem.logging import get_logger

_TABLES = (S.TURNS, S.SEGMENTS, S.SUMMARIES, S.TRACES)

log = get_logger("hymem.indexes.store.store")


def read_meta_file(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(meta.json, None), or (None, why it cannot be read); (None, None) when there is none."""
    try:
        return read_json(folder / META_FILE), None
    except StoreCorruptedError as exc:
        return None, str(exc)


class FolderMeta:
    """Checks and keeps the folder's meta while it opens the tables (a writer creates them)."""

    def __init__(
        self,
        folder: Path | str,
        lance: LanceTables,
        *,
        read_only: bool,
        embedder_name: str,
        dim: int,
        keep_file: bool = True,
    ) -> None:
        """`keep_file=False` (an object store): the `meta` table is the only copy."""
        self._folder = folder
        self._keep_file = keep_file
        self._lance = lance
        self._read_only = read_only
        self._embedder_name = embedder_name
        self._dim = dim

    def check(self, meta: dict[str, Any]) -> None:
        """`check_meta`, except that a writer accepts an older schema it can upgrade
        (`upgrade` then does it); a reader is told how to get it upgraded."""
        found = meta.get("schema_version")
        if can_migrate(found):
            if self._read_only:
                raise SchemaVersionError(
                    f"{self._folder} was written by an older hymem (schema version {found}); "
                    f"run `hymem upgrade --store {self._folder}` (or open it once for "
                    f"writing) to bring it to version {S.SCHEMA_VERSION}"
                )
            meta = {**meta, "schema_version": S.SCHEMA_VERSION}
        check_meta(
            meta,
            self._folder,
            schema_version=S.SCHEMA_VERSION,
            embedder_name=self._embedder_name,
            dim=self._dim,
        )

    def upgrade(self, meta: dict[str, Any]) -> dict[str, Any]:
        """Bring an older folder's tables to S.SCHEMA_VERSION (`migrate`), then record it:
        meta.json and its copy move only after every step finished."""
        found = meta.get("schema_version")
        if not can_migrate(found) or self._read_only:
            return meta
        assert isinstance(found, int)
        migrate(self._lance, found, str(self._folder))
        meta = {**meta, "schema_version": S.SCHEMA_VERSION}
        self._write(meta)
        return meta

    def _write(self, meta: dict[str, Any]) -> None:
        rows = [{"key": k, "value": str(v)} for k, v in meta.items()]
        self._lance.delete(S.META, "true")
        self._lance.add(S.META, pa.Table.from_pylist(rows, schema=S.meta_schema()))
        if self._keep_file:
            _write_json(Path(self._folder) / META_FILE, meta)

    def open(self, meta: dict[str, Any] | None, damage: str | None) -> tuple[dict[str, Any], bool]:
        """The folder's meta (from meta.json, else its copy), with the tables open; True when
        the folder is new (a writer then writes its meta)."""
        if meta is None:
            meta = self._from_table(damage)
        self._open_tables()
        if meta is not None:
            return meta, False
        meta = new_meta(S.SCHEMA_VERSION, self._embedder_name, self._dim)
        self._write(meta)
        return meta, True

    def _open_tables(self) -> None:
        if self._read_only:
            for name in _TABLES:
                if not self._lance.open_existing(name):
                    raise StoreError(f"{self._folder} is missing its {name!r} table")
            return
        self._lance.ensure(S.TURNS, S.turns_schema())
        self._lance.ensure(S.SEGMENTS, S.segments_schema(self._dim))
        self._lance.ensure(S.SUMMARIES, S.summaries_schema(self._dim))
        self._lance.ensure(S.TRACES, S.traces_schema())
        self._lance.ensure(S.META, S.meta_schema())

    def _from_table(self, damage: str | None) -> dict[str, Any] | None:
        """The `meta` table's copy, for a meta.json that is lost or garbage (`damage`); None
        for a new folder, a typed error where a folder that is not new has no copy."""
        found = self._lance.open_existing(S.META)
        meta = meta_from_rows(self._lance.rows(S.META, None)) if found else None
        if meta is None:
            if damage is not None:
                raise StoreCorruptedError(
                    f"{damage}, and its copy in the meta table is gone: the embedder that "
                    f"built {self._folder} is unknown; restore meta.json from a backup"
                )
            if self._read_only:
                raise StoreError(f"no hymem memory at {self._folder} to open read-only")
            return None
        self.check(meta)
        if not self._keep_file:
            return meta
        event = "store.meta_from_table" if self._read_only else "store.meta_restored"
        log.warning(event, path=str(self._folder), reason=damage or f"{META_FILE} is missing")
        if not self._read_only and self._keep_file:
            _write_json(Path(self._folder) / META_FILE, meta)
        return meta


def open_folder(
    folder: Path, *, read_only: bool, embedder_name: str, dim: int
) -> tuple[LanceTables, dict[str, Any], bool]:
    """Check the folder's meta and open its tables: (tables, meta, created). A missing or
    rolled-back table is damage to report before any table is (re)created, never something to
    paper over with an empty one (`table_state`)."""
    from hymem.indexes.lance.table_state import TableState

    meta, damage = read_meta_file(folder)
    if meta is None and read_only and not (folder / "lance").is_dir():
        raise StoreError(f"no hymem memory at {folder} to open read-only")
    lance = LanceTables(folder / "lance", read_only=read_only)
    keeper = FolderMeta(folder, lance, read_only=read_only, embedder_name=embedder_name, dim=dim)
    if meta is not None:
        keeper.check(meta)
    TableState(folder, lance).check()
    meta, created = keeper.open(meta, damage)
    return lance, keeper.upgrade(meta), created


__all__ = ["FolderMeta", "open_folder", "read_meta_file"]
