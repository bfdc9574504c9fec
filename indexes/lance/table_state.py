"""What the last commit left in each LanceDB table, so damage is noticed on open.

LanceDB keeps every table version as a manifest file. Deleting the newest manifests silently
rolls a table back; deleting a table's folder made a writer recreate it empty (107 summaries
became 0, their segments left behind). `tables.json` records, at every point the lexical sync is
recorded (each commit, compaction and rebuild), the version and row count of the tables hymem
commits to. On open, a table that is missing, at an older version, or holding fewer rows than
that record at the same version is damage: a `StoreCorruptedError` naming the table and what to
run, never a silent rollback. A table at a newer version was written after the record (a commit
that died before recording it, which its journal settles), so that alone is not damage; and the
check waits while a journal is pending, since settling it is what comes first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hymem.core.errors import StoreCorruptedError
from hymem.indexes.jsonfile import read_json, write_json_atomic
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.tables import LanceTables

TABLES_FILE = "tables.json"
JOURNAL_FILE = "journal.json"  # commits.JOURNAL_FILE (not imported: commits imports this side)
WATCHED = (S.TURNS, S.SEGMENTS, S.SUMMARIES)


class TableState:
    """The `tables.json` record of one store folder."""

    def __init__(self, folder: Path, lance: LanceTables) -> None:
        self.file = folder / TABLES_FILE
        self._lance = lance

    def snapshot(self) -> dict[str, dict[str, int]]:
        return {
            t: {"version": self._lance.version(t), "rows": self._lance.count(t)} for t in WATCHED
        }

    def record(self) -> None:
        write_json_atomic(self.file, self.snapshot())

    def recorded(self) -> dict[str, Any] | None:
        """The record, or None when there is none or it cannot be read (it is bookkeeping:
        the next commit rewrites it, and without it nothing can be checked)."""
        try:
            return read_json(self.file)
        except StoreCorruptedError:
            return None

    def problems(self) -> list[str]:
        """What disagrees with the record, one line per table; [] when all is well."""
        rec = self.recorded() or {}
        names = self._lance.names()
        out: list[str] = []
        for table, want in rec.items():
            if table not in WATCHED or not isinstance(want, dict):
                continue
            rows, version = int(want.get("rows", 0)), int(want.get("version", 0))
            if table not in names:
                out.append(f"table {table!r} is missing (the last commit left {rows:,} rows)")
                continue
            self._lance.open_existing(table)
            have_v, have_rows = self._lance.version(table), self._lance.count(table)
            if have_v < version:
                out.append(
                    f"table {table!r} is at version {have_v}, older than the last commit's "
                    f"{version}: its newest manifests are gone"
                )
            elif have_v == version and have_rows < rows:  # same version, yet rows gone
                out.append(
                    f"table {table!r} holds {have_rows:,} rows where the last commit left {rows:,}"
                )
        return out

    def check(self) -> None:
        """StoreCorruptedError when `problems` finds any (not while a journal is pending)."""
        if (self.file.parent / JOURNAL_FILE).exists():
            return
        found = self.problems()
        if found:
            folder = self.file.parent
            raise StoreCorruptedError(
                f"the memory at {folder} is damaged: {'; '.join(found)}. Run `hymem doctor "
                f"--store {folder}` for details and `hymem repair --store {folder}` to restore "
                "the newest readable version of each table"
            )


__all__ = ["TABLES_FILE", "WATCHED", "TableState"]
