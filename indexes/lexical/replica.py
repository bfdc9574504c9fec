"""A worker's Tantivy index kept as a replica of LanceDB's summaries and segments tables.

With LanceDB on object storage, many stateless workers write the tables and each keeps its own
lexical index in a local cache folder. The index follows the tables by fragment, never by a
full rebuild per query: `catch_up` lists the newest version's fragments (manifest only) and
diffs them against what the index reflects (`replica_state.py`):

* a new fragment (an append, the insert half of a merge_insert or update, a compaction's
  output): its live rows are read (lexical columns and write stamps only) and upserted;
* a fragment whose deletion file changed: its live row offsets are read (the deletion file, no
  row data), and the keys indexed from it that are no longer live are deleted;
* a fragment gone (compacted away, or every row deleted): all its keys are deleted.

A key both deleted and re-added is settled by its digest (`digest`): a compaction moved it
(same document and write stamps: left alone, its user not reported), or a status change or
re-add rewrote it (re-indexed with the new document). Keys no new fragment brought back are
deleted. Then one Tantivy commit, then the state: a crash between the two re-applies the same
diff from the old state, which is idempotent, and a catch-up that fails midway rolls back its
uncommitted Tantivy writes. A state that cannot be trusted (missing, garbage, a version newer
than the table's, a fragment whose data files changed, counts that differ from the index)
starts over from an empty index.

Live (user_id, id) keys are assumed unique per table, as hymem's writes keep them: a key live
in two fragments is one document, and deleting either copy deletes it.
"""

from __future__ import annotations

import hashlib
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hymem.core.errors import CommitConflictError, StoreCorruptedError
from hymem.core.logging import get_logger
from hymem.core.types import Level
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.fragments import (
    ROW_ADDR,
    Fragment,
    Snapshot,
    SnapshotPruned,
    fragment_batches,
    latest_snapshot,
    live_offsets,
    offsets,
)
from hymem.indexes.lance.tables import PRUNED_ATTEMPTS, LanceTables
from hymem.indexes.lexical.index import LexDoc, LexicalIndex
from hymem.indexes.lexical.replica_state import FragRecord, ReplicaState, TableRecord, empty_keys
from hymem.indexes.lexical.sync import LEX_COLS, SUMMARY_LEX_COLS, segment_doc, summary_doc

log = get_logger("hymem.indexes.lexical.replica")

# Rows read from LanceDB per batch: bounds memory whatever a fragment's size.
READ_BATCH_ROWS = 10_000

Key = tuple[str, str]  # (user_id, id)


@dataclass(frozen=True)
class _Source:
    table: str
    level: Level
    columns: list[str]
    to_doc: Callable[[dict[str, Any]], LexDoc]
    # Write stamps folded into a row's digest: a rewrite of a row whose document did not
    # change (a new vector, a re-commit) still names its user in `CatchUp.users`.
    stamps: tuple[str, ...]


SOURCES = (
    _Source(
        S.SUMMARIES, Level.SUMMARY, SUMMARY_LEX_COLS, summary_doc, ("created_at", "updated_at")
    ),
    _Source(S.SEGMENTS, Level.SEGMENT, LEX_COLS, segment_doc, ("created_at",)),
)
TABLES = tuple(s.table for s in SOURCES)


@dataclass(frozen=True)
class CatchUp:
    """What one catch-up did."""

    upserted: int  # documents (re)indexed
    deleted: int  # documents removed
    users: frozenset[str]  # users whose summaries/segments changed (all of them when rebuilt)
    versions: dict[str, int]  # table -> LanceDB version now matched
    rebuilt: bool  # True when it started from an empty index
    rows_read: int = 0  # rows read from LanceDB (0 when nothing new arrived)


class Unusable(Exception):
    """The recorded state cannot be followed from; the replica rebuilds."""


@dataclass(frozen=True)
class Diff:
    new: list[int] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)  # deletion file changed
    gone: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.new or self.changed or self.gone)


def diff(recorded: TableRecord, snap: Snapshot) -> Diff:
    """How the table's fragments moved since `recorded`; Unusable when they cannot have
    come from it (an older version, a fragment id whose data files differ: recreated)."""
    if snap.version < recorded.version:
        raise Unusable(f"table version {snap.version} is older than {recorded.version}")
    out = Diff()
    for fid, frag in sorted(snap.fragments.items()):
        rec = recorded.fragments.get(fid)
        if rec is None:
            out.new.append(fid)
        elif rec.files != frag.files:
            raise Unusable(f"fragment {fid} has other data files (table recreated?)")
        elif rec.deletion != frag.deletion:
            out.changed.append(fid)
    out.gone.extend(sorted(set(recorded.fragments) - set(snap.fragments)))
    return out


def digest(row: dict[str, Any], stamps: list[int]) -> int:
    """A stable 64-bit digest of a row's lexical columns and write stamps: a key that reappears
    with the same digest was moved (a compaction), not rewritten (an update, a re-add)."""
    text = repr((tuple(row.values()), stamps))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())


class _Batch:
    """One catch-up's changes: keys to delete (with the digest indexed), users touched."""

    def __init__(self) -> None:
        self.doomed: dict[Level, dict[Key, int]] = defaultdict(dict)
        self.users: set[str] = set()
        self.upserted = 0
        self.rows_read = 0

    def doom(self, level: Level, keys: pa.Table) -> None:
        cols = (keys.column(c).to_pylist() for c in ("user_id", "id", "digest"))
        self.doomed[level].update(((u, i), d) for u, i, d in zip(*cols, strict=True))

    def changed(self, level: Level, key: Key, dig: int) -> bool:
        """Whether a row read from a new fragment needs (re)indexing; it is no longer doomed
        either way (a moved row keeps its document, an updated one gets the new)."""
        if self.doomed[level].pop(key, None) == dig:
            return False
        self.users.add(key[0])
        self.upserted += 1
        return True

    def leftover(self) -> dict[Level, dict[str, list[str]]]:
        """The doomed keys no new fragment brought back, by level and user."""
        out: dict[Level, dict[str, list[str]]] = {}
        for level, keys in self.doomed.items():
            by_user: dict[str, list[str]] = defaultdict(list)
            for user, id_ in keys:
                by_user[user].append(id_)
                self.users.add(user)
            out[level] = by_user
        return out


class LexicalReplica:
    """A worker's Tantivy index kept as a replica of LanceDB's summaries and segments tables.

    The index must be writable and used by this replica only (its cache folder is the
    worker's own). `catch_up` may run beside searches; catch-ups themselves are serialised."""

    def __init__(self, lance: LanceTables, lex: LexicalIndex, state_file: Path) -> None:
        self._lance = lance
        self._lex = lex
        self._state = ReplicaState(state_file)
        self._records: dict[str, TableRecord] | None = None  # loaded and checked once
        self._lock = threading.Lock()
        # the last catch-up's snapshots: an unchanged table's is reused (`latest_snapshot`)
        self._snaps: dict[str, Snapshot] = {}

    @property
    def versions(self) -> dict[str, int]:
        """The versions the index matches now (from the state; empty when there is none)."""
        records = self._records if self._records is not None else self._state.load(TABLES)
        return {name: rec.version for name, rec in (records or {}).items()}

    def catch_up(self) -> CatchUp:
        """Bring the index to the tables' newest versions; the first call on an empty cache
        builds it all. Reads only manifests when nothing changed."""
        with self._lock:
            return self._on_fresh_snapshots(self._catch_up)

    def rebuild(self) -> CatchUp:
        """Build the index afresh (a new folder): after an erasure, so no segment of this
        worker's index still holds an erased document's bytes."""
        with self._lock:
            self._snaps = {}
            return self._on_fresh_snapshots(lambda: self._rebuild(self._snapshots()))

    def _on_fresh_snapshots(self, step: Callable[[], CatchUp]) -> CatchUp:
        """`step`, run again on new snapshots while an erasure prunes the pinned ones under
        its reads (`SnapshotPruned`; nothing it wrote to the index was committed). The same
        versions failing twice is damage; pruned that many times in a row, a conflict the
        caller retries."""
        failed_at: dict[str, int] | None = None
        for attempt in range(1, PRUNED_ATTEMPTS + 1):
            try:
                return step()
            except SnapshotPruned as exc:
                versions = {name: snap.version for name, snap in self._snaps.items()}
                self._snaps = {}
                if versions == failed_at:
                    raise StoreCorruptedError(
                        f"LanceDB's newest version of the lexical tables misses a file: {exc}; "
                        "run `hymem repair`"
                    ) from exc
                if attempt == PRUNED_ATTEMPTS:
                    raise CommitConflictError(
                        f"the lexical tables had their versions pruned under this catch-up "
                        f"{attempt} times in a row (concurrent erasures): retry it"
                    ) from exc
                failed_at = versions
                log.info("replica.pruned_retry", attempt=attempt, versions=versions)
        raise AssertionError("unreachable")

    def _snapshots(self) -> dict[str, Snapshot]:
        """The tables' newest versions (an unchanged table's last snapshot reused)."""
        self._snaps = {
            name: latest_snapshot(self._lance, name, self._snaps.get(name)) for name in TABLES
        }
        return self._snaps

    def _catch_up(self) -> CatchUp:
        snaps = self._snapshots()
        if self._records is None:
            self._records = self._checked_state()
        try:
            if self._records is None:
                raise Unusable("no usable state")
            return self._follow(self._records, snaps)
        except (Unusable, StoreCorruptedError) as exc:
            log.info("replica.rebuild", reason=str(exc), path=str(self._state.file))
            return self._rebuild(snaps)

    def _checked_state(self) -> dict[str, TableRecord] | None:
        """The state file, if the index on disk is the one it describes."""
        records = self._state.load(TABLES)
        if records is None or self._lex.problem is not None:
            return None
        for src in SOURCES:
            rows = sum(f.rows for f in records[src.table].fragments.values())
            if self._lex.count(src.level) != rows:
                return None
        return records

    def _follow(self, records: dict[str, TableRecord], snaps: dict[str, Snapshot]) -> CatchUp:
        diffs = {name: diff(records[name], snaps[name]) for name in TABLES}
        versions = {name: snaps[name].version for name in TABLES}
        if not any(diffs.values()):
            if versions != {name: rec.version for name, rec in records.items()}:
                self._commit_state(
                    {n: TableRecord(versions[n], records[n].fragments) for n in TABLES}
                )
            return CatchUp(0, 0, frozenset(), versions, rebuilt=False)
        batch = _Batch()
        frags = {name: dict(records[name].fragments) for name in TABLES}
        for src in SOURCES:
            self._retire(src, diffs[src.table], snaps[src.table], frags[src.table], batch)
        try:
            deleted = self._apply(diffs, snaps, frags, batch)
        except BaseException:
            if self._lex.problem is None:
                self._lex.rollback()
            raise
        self._commit_state({n: TableRecord(versions[n], frags[n]) for n in TABLES})
        users = frozenset(batch.users)
        return CatchUp(batch.upserted, deleted, users, versions, False, batch.rows_read)

    def _apply(
        self,
        diffs: dict[str, Diff],
        snaps: dict[str, Snapshot],
        frags: dict[str, dict[int, FragRecord]],
        batch: _Batch,
    ) -> int:
        """Index the new fragments, delete what did not come back, commit; returns deletes."""
        for src in SOURCES:
            snap = snaps[src.table]
            for fid in diffs[src.table].new:
                docs, recorder = self._read(src, snap, snap.fragments[fid], batch)
                self._lex.upsert(docs)
                frags[src.table][fid] = recorder()
        # Only keys no upsert brought back remain doomed, so deleting them last is safe.
        deleted = 0
        for level, by_user in batch.leftover().items():
            for user, ids in by_user.items():
                self._lex.delete(level, user, ids)
                deleted += len(ids)
        self._lex.commit()
        return deleted

    def _retire(
        self, src: _Source, d: Diff, snap: Snapshot, frags: dict[int, FragRecord], batch: _Batch
    ) -> None:
        """Doom the keys of gone fragments and of rows deleted from changed ones."""
        for fid in d.gone:
            batch.doom(src.level, self._state.read_keys(frags.pop(fid)))
        for fid in d.changed:
            keys = self._state.read_keys(frags[fid])
            live = pc.is_in(keys.column("offset"), value_set=live_offsets(snap, fid))
            batch.doom(src.level, keys.filter(pc.invert(live)))
            frags[fid] = self._state.write_keys(src.table, snap.fragments[fid], keys.filter(live))

    def _read(
        self, src: _Source, snap: Snapshot, frag: Fragment, batch: _Batch
    ) -> tuple[Iterator[LexDoc], Callable[[], FragRecord]]:
        """The documents of a fragment's live rows that need indexing (all, in a rebuild),
        and (once they are consumed) a function that writes its key file and returns its
        record."""
        parts: list[pa.Table] = []
        columns = [*src.columns, *src.stamps]

        def docs() -> Iterator[LexDoc]:
            for rb in fragment_batches(snap, frag.id, columns, READ_BATCH_ROWS):
                digests: list[int] = []
                # stamps as integers: converting them to datetimes would cost more than the rest
                stamps = [rb.column(c).cast(pa.int64()).to_pylist() for c in src.stamps]
                for row, *stamp in zip(rb.select(src.columns).to_pylist(), *stamps, strict=True):
                    dig = digest(row, stamp)
                    digests.append(dig)
                    if batch.changed(src.level, (row["user_id"], row["id"]), dig):
                        yield src.to_doc(row)
                batch.rows_read += rb.num_rows
                keys = {
                    "offset": offsets(rb.column(ROW_ADDR)),
                    "user_id": rb.column("user_id"),
                    "id": rb.column("id"),
                    "digest": pa.array(digests, pa.uint64()),
                }
                parts.append(pa.table(keys))

        def record() -> FragRecord:
            keys = pa.concat_tables(parts) if parts else empty_keys()
            return self._state.write_keys(src.table, frag, keys)

        return docs(), record

    def _rebuild(self, snaps: dict[str, Snapshot]) -> CatchUp:
        """Index every live row of the snapshots into a fresh index, then record the state."""
        self._records = None
        self._state.reset()
        batch = _Batch()
        frags: dict[str, dict[int, FragRecord]] = {name: {} for name in TABLES}

        def docs() -> Iterator[LexDoc]:
            for src in SOURCES:
                snap = snaps[src.table]
                for fid, frag in sorted(snap.fragments.items()):
                    fragment_docs, recorder = self._read(src, snap, frag, batch)
                    yield from fragment_docs
                    frags[src.table][fid] = recorder()

        n = self._lex.rebuild(docs(), fresh=True)
        versions = {name: snaps[name].version for name in TABLES}
        self._commit_state({name: TableRecord(versions[name], frags[name]) for name in TABLES})
        log.info("replica.rebuilt", documents=n, versions=versions)
        return CatchUp(n, 0, frozenset(batch.users), versions, True, batch.rows_read)

    def _commit_state(self, records: dict[str, TableRecord]) -> None:
        self._state.save(records)
        self._records = records


__all__ = ["SOURCES", "TABLES", "CatchUp", "Diff", "LexicalReplica", "Unusable", "diff"]
