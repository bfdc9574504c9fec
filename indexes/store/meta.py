"""A store's identity: schema version, embedder and dimension, kept in the `meta` table.

Opening with another embedder or dimension is refused (`folder.lock.check_meta`): mixing vector
spaces would corrupt search silently. A folder also keeps the same meta as `meta.json`
(`folder.meta`), so a lost or garbage file is never fatal: a writer puts the file back from the
table, a reader reads the table and writes nothing. On an object store the table is the only
copy. A store that lost both is a `StoreCorruptedError`: guessing its embedder is never safe.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from hymem.core.errors import SchemaVersionError, StoreCorruptedError, StoreError
from hymem.core.logging import get_logger
from hymem.indexes.folder.lock import (
    CURSOR_KEY,
    META_FILE,
    check_meta,
    meta_from_rows,
    new_cursor_key,
    new_meta,
)
from hymem.indexes.jsonfile import write_json_atomic as _write_json
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.migrate import can_migrate, migrate
from hymem.indexes.lance.tables import LanceTables

_TABLES = (S.TURNS, S.SEGMENTS, S.SUMMARIES, S.TRACES)
# A claim on a new store's identity (`objects/open.py`): given the identity this opener would
# write, the one that won (this one, or a concurrent opener's) and whether this opener won.
Claim = Callable[[dict[str, Any]], tuple[dict[str, Any], bool]]
CLAIM_WAIT_S = 30.0  # how long a losing opener waits for the winner to write the meta table
OVERWRITE_TRIES = 5
COMMIT_CONFLICT = "Retryable commit conflict"  # LanceDB: another commit pre-empted this one

log = get_logger("hymem.indexes.store.meta")


class MetaKeeper:
    """Checks and keeps a store's identity while it opens the tables (a writer creates them)."""

    def __init__(
        self,
        label: Path | str,
        lance: LanceTables,
        *,
        read_only: bool,
        embedder_name: str,
        dim: int,
        meta_file: Path | None,
        claim: Claim | None = None,
    ) -> None:
        """`label` names the store in errors; `meta_file` is a folder's meta.json, kept in
        step with the table (None on an object store: the `meta` table is the only copy).
        `claim`: several processes may create the store at once (an object store's workers);
        only the winner of the claim writes the meta table, the others read what it wrote."""
        self._folder = label
        self._meta_file = meta_file
        self._lance = lance
        self._read_only = read_only
        self._embedder_name = embedder_name
        self._dim = dim
        self._claim = claim

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
        meta.json and its copy move only after every step finished. A folder made before
        page cursors were signed gets its cursor key (`CURSOR_KEY`) the same way."""
        found = meta.get("schema_version")
        if self._read_only or (not can_migrate(found) and CURSOR_KEY in meta):
            return meta
        if can_migrate(found):
            assert isinstance(found, int)
            migrate(self._lance, found, str(self._folder))
        meta = {
            **meta,
            "schema_version": S.SCHEMA_VERSION,
            CURSOR_KEY: meta.get(CURSOR_KEY) or new_cursor_key(),
        }
        self._write(meta)
        return meta

    def _write(self, meta: dict[str, Any]) -> None:
        """The identity rows as the table's whole content, in one commit (a delete then an
        add, two commits, left the rows twice when two writers interleaved them). A writer
        pre-empted by another's overwrite (the same rows, on a new store) writes again over
        it: the table ends holding one copy either way."""
        rows = [{"key": k, "value": str(v)} for k, v in meta.items()]
        data = pa.Table.from_pylist(rows, schema=S.meta_schema())
        for attempt in range(OVERWRITE_TRIES):
            try:
                self._lance.overwrite(S.META, data)
                break
            except RuntimeError as exc:
                if COMMIT_CONFLICT not in str(exc) or attempt == OVERWRITE_TRIES - 1:
                    raise
                self._lance.refresh()
                time.sleep(0.05 * (attempt + 1))
        if self._meta_file is not None:
            _write_json(self._meta_file, meta)

    def open(self, meta: dict[str, Any] | None, damage: str | None) -> tuple[dict[str, Any], bool]:
        """The folder's meta (from meta.json, else its copy), with the tables open; True when
        the folder is new (a writer then writes its meta)."""
        if meta is None:
            meta = self._from_table(damage)
        self._open_tables()
        if meta is not None:
            return meta, False
        meta = new_meta(S.SCHEMA_VERSION, self._embedder_name, self._dim)
        if self._claim is None:
            self._write(meta)
            return meta, True
        meta, won = self._claim(meta)
        if won or not self._await_winner():
            self._write(meta)  # the winner died before writing it: the same rows, once more
        found = self._from_table(None)
        if found is None:
            raise StoreError(f"{self._folder}: its identity could not be written; retry")
        return found, won

    def _await_winner(self) -> bool:
        """Wait for the opener that won the claim to write the meta table; False if it did
        not within CLAIM_WAIT_S (it may have died between the claim and the write)."""
        deadline = time.monotonic() + CLAIM_WAIT_S
        delay = 0.05
        while True:
            self._lance.refresh()
            if meta_from_rows(self._lance.rows(S.META, None)) is not None:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

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
        if self._meta_file is None:
            return meta
        event = "store.meta_from_table" if self._read_only else "store.meta_restored"
        log.warning(event, path=str(self._folder), reason=damage or f"{META_FILE} is missing")
        if not self._read_only:
            _write_json(self._meta_file, meta)
        return meta


__all__ = ["Claim", "MetaKeeper"]
