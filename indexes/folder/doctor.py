"""`hymem doctor` and `hymem repair`: find damaged LanceDB tables and restore what can be.

LanceDB keeps every version of a table (one manifest each), so a table whose newest files are
damaged usually has an older version that still reads whole. `diagnose` reads every row of the
tables hymem commits to (a full scan, unlike an open, which reads only manifests) and compares
them with `tables.json`, the record of what the last commit left (`table_state`). `repair` takes
the writer lock, restores each damaged table to its newest fully readable version (a missing or
unreadable table is recreated empty), records the result, then opens the store the normal way and
makes the rest agree with the restored tables: turns whose segment is gone are pending again (the
next flush summarises them anew, since turns are the raw dialogue), summaries whose segment is
gone are dropped, and the lexical index is rebuilt. It reports, per table, which version it went
back to and how many rows the last commit had that are now lost.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from hymem.core.errors import StoreCorruptedError, StoreError
from hymem.indexes.folder.journal import JOURNAL_FILE
from hymem.indexes.folder.lock import WriterLock, meta_from_rows
from hymem.indexes.folder.meta import read_meta_file
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.table_state import WATCHED, TableState
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.open import open_store

SCAN_ROWS = 10_000
MAX_QUARANTINED = 16  # newest manifests moved aside before a table is given up as unreadable


@dataclass
class TableCheck:
    """One table as the doctor found it."""

    name: str
    exists: bool
    version: int | None = None
    rows: int | None = None  # rows read by a full scan (None: the scan failed)
    recorded_rows: int | None = None
    recorded_version: int | None = None
    error: str | None = None

    def problem(self) -> str | None:
        if not self.exists:
            return "missing"
        if self.error is not None:
            return f"unreadable: {self.error}"
        if self.recorded_version is not None and (self.version or 0) < self.recorded_version:
            return f"rolled back to version {self.version} (last commit: {self.recorded_version})"
        if self.recorded_rows is not None and (self.rows or 0) < self.recorded_rows:
            return f"{self.rows:,} rows where the last commit left {self.recorded_rows:,}"
        return None


@dataclass
class Diagnosis:
    folder: str
    tables: list[TableCheck] = field(default_factory=list)
    journal_pending: bool = False  # settled by the next writer open

    @property
    def healthy(self) -> bool:
        return all(t.problem() is None for t in self.tables)

    def as_dict(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "healthy": self.healthy,
            "journal_pending": self.journal_pending,
            "tables": [{**asdict(t), "problem": t.problem()} for t in self.tables],
        }


def _scan(lance: LanceTables, name: str) -> int:
    """Rows of `name` read from every fragment (raises on damage)."""
    return sum(b.num_rows for b in lance.batches(name, None, None, SCAN_ROWS))


def _short(exc: BaseException) -> str:
    return str(exc).split(", /rustc/")[0][:300]


def diagnose(folder: str | Path) -> Diagnosis:
    """Read every watched table whole and compare it with the last commit's record."""
    folder = Path(folder)
    if not (folder / "lance").is_dir():
        raise StoreError(f"no hymem memory at {folder}")
    lance = LanceTables(folder / "lance", read_only=True)
    recorded = TableState(folder, lance).recorded() or {}
    names = lance.names()
    out = Diagnosis(folder=str(folder), journal_pending=(folder / JOURNAL_FILE).exists())
    for name in WATCHED:
        want = recorded.get(name) or {}
        check = TableCheck(
            name=name,
            exists=name in names,
            recorded_rows=want.get("rows"),
            recorded_version=want.get("version"),
        )
        if check.exists:
            try:
                lance.open_existing(name)
                check.version = lance.version(name)
                check.rows = _scan(lance, name)
            except Exception as exc:
                check.error = _short(exc)
        out.tables.append(check)
    return out


@dataclass
class TableRepair:
    name: str
    action: str  # "restored", "recreated empty", "unchanged"
    from_version: int | None = None
    to_version: int | None = None
    rows: int = 0
    rows_lost: int = 0  # rows the last commit left that the table no longer holds


@dataclass
class RepairReport:
    tables: list[TableRepair] = field(default_factory=list)
    turns_pending: int = 0
    segments_removed: int = 0
    summaries_removed: int = 0
    lexical: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _schemas(dim: int) -> dict[str, pa.Schema]:
    return {
        S.TURNS: S.turns_schema(),
        S.SEGMENTS: S.segments_schema(dim),
        S.SUMMARIES: S.summaries_schema(dim),
    }


def _open_or_quarantine(lance: LanceTables, folder: Path, name: str) -> bool:
    """Open the table, moving unreadable newest manifests aside (to `damaged/<table>/`, never
    deleted) until one opens; False when none does."""
    versions = folder / "lance" / f"{name}.lance" / "_versions"
    for _ in range(MAX_QUARANTINED):
        try:
            if lance.open_existing(name):
                return True
        except Exception:
            pass
        manifests = sorted(versions.glob("*.manifest"))  # newest first (u64::MAX - version)
        if not manifests:
            return False
        dest = folder / "damaged" / name
        dest.mkdir(parents=True, exist_ok=True)
        for path in (manifests[0], versions / "latest_version_hint.json"):
            if path.exists():
                shutil.move(str(path), str(dest / path.name))
    return False


def _restore(lance: LanceTables, check: TableCheck, dim: int, folder: Path) -> TableRepair:
    """The newest version of the table that reads whole, made current; else an empty table."""
    recorded = check.recorded_rows or 0
    if check.exists and _open_or_quarantine(lance, folder, check.name):
        table = lance.table(check.name)
        versions = sorted((_version_of(v) for v in table.list_versions()), reverse=True)
        for v in versions:
            try:
                table.checkout(v)
                rows = _scan(lance, check.name)
            except Exception:
                continue
            table.restore()
            return TableRepair(
                check.name,
                "restored",
                from_version=check.version,
                to_version=v,
                rows=rows,
                rows_lost=max(recorded - rows, 0),
            )
        lance.drop(check.name)
    lance.ensure(check.name, _schemas(dim)[check.name])
    return TableRepair(check.name, "recreated empty", rows=0, rows_lost=recorded)


def _version_of(entry: Any) -> int:
    return int(entry["version"] if isinstance(entry, dict) else entry.version)


def identity(folder: Path) -> tuple[str, int]:
    """(embedder name, dim) the folder was built with: from meta.json, else its `meta` table
    copy (repair must open the store with exactly these)."""
    meta, _ = read_meta_file(folder)
    if meta is None:
        lance = LanceTables(folder / "lance", read_only=True)
        meta = meta_from_rows(lance.rows(S.META, None)) if lance.open_existing(S.META) else None
    if not meta or "embedder" not in meta or not str(meta.get("dim", "")).isdigit():
        raise StoreCorruptedError(f"{folder} has no readable meta.json or meta table copy")
    return str(meta["embedder"]), int(meta["dim"])


def repair(folder: str | Path) -> RepairReport:
    """Restore damaged tables (see the module docstring); StoreLockedError if a writer runs."""
    folder = Path(folder)
    embedder_name, dim = identity(folder)
    found = diagnose(folder)
    report = RepairReport()
    lock = WriterLock(folder)
    try:
        lance = LanceTables(folder / "lance", read_only=False)
        for check in found.tables:
            if check.problem() is None:
                report.tables.append(TableRepair(check.name, "unchanged", rows=check.rows or 0))
                continue
            report.tables.append(_restore(lance, check, dim, folder))
        for name in WATCHED:
            lance.open_existing(name)
        TableState(folder, lance).record()  # what the tables hold now is the new baseline
    finally:
        lock.release()
    with open_store(folder, embedder_name=embedder_name, dim=dim) as store:
        lost = any(t.name == S.SUMMARIES and t.action != "unchanged" for t in report.tables)
        settled = store.settle_rows(summaries_lost=lost)
        report.turns_pending = settled.turns_pending
        report.segments_removed = settled.segments_removed
        report.summaries_removed = settled.summaries_removed
        report.lexical = store.reindex()
    return report


__all__ = ["Diagnosis", "RepairReport", "TableCheck", "diagnose", "identity", "repair"]
