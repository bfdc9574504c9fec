"""Fragment-level reads of a LanceDB table, for replicas that follow it incrementally.

`vectors.LanceTables` answers row queries; a replica (`replica.py`) needs what sits under them:
the fragments of one pinned version, each with its data files and deletion file, and the rows
of one fragment only. Facts of pylance 14 / lancedb 0.40 this relies on (checked by
`tests/integration/test_lexical_replica.py`):

* fragment ids are never reused within a dataset: an append adds a fragment with a new id, a
  compaction replaces fragments by new ids, a fragment whose rows are all deleted is dropped;
* a delete (and the delete half of `merge_insert`, `update`) keeps the fragment and its data
  files and writes it a new deletion file (new id/read_version, `num_deleted_rows`);
* a table recreated under the same name starts again at fragment 0 with other data files;
* reading only `_rowaddr` of a fragment reads its deletion file but no data pages.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hymem.indexes.lance.tables import LanceTables, pruned_under

ROW_ADDR = "_rowaddr"
# A row address is (fragment id << 32) | offset in the fragment.
OFFSET_MASK = 0xFFFF_FFFF


class SnapshotPruned(Exception):
    """A file of a pinned snapshot was pruned under the read: an erasure (in this worker or
    another) prunes every older version of a table at once. Read again from a new snapshot.
    Not an OSError or ValueError, so the Tantivy writer consuming the rows never takes it for
    damage to its own index."""


@contextmanager
def _pinned_read() -> Iterator[None]:
    try:
        yield
    except (RuntimeError, OSError, ValueError) as exc:
        if pruned_under(exc):
            raise SnapshotPruned(str(exc)) from exc
        raise


@dataclass(frozen=True, slots=True)
class Fragment:
    """What identifies one fragment's contents: its data files and its deletion file."""

    id: int
    files: tuple[str, ...]
    deletion: str | None  # "read_version.id.num_deleted" of its deletion file; None: none


@dataclass(frozen=True)
class Snapshot:
    """One pinned version of a table; every read goes to that version."""

    version: int
    fragments: dict[int, Fragment]
    dataset: Any = None  # lance.LanceDataset; None for a table that does not exist


def _deletion_marker(meta: Any) -> str | None:
    d = meta.deletion_file
    if d is None:
        return None
    return f"{d.read_version}.{d.id}.{d.num_deleted_rows}"


def _unchanged(snap: Snapshot) -> bool:
    """Whether the table `snap` pinned is still at that version (one version listing)."""
    return snap.dataset is not None and int(snap.dataset.latest_version) == snap.version


def latest_snapshot(lance: LanceTables, name: str, previous: Snapshot | None = None) -> Snapshot:
    """The table's newest version, whatever the connection's read_consistency_interval
    (`checkout_latest` forces the check); a missing table is version 0 with no fragments.
    Reads the manifest only. `previous`, this table's last snapshot from the same `lance`, is
    returned as it is when the version has not moved: on an object store that check is one
    listing, where moving the table and pinning a dataset take two more listings and a HEAD
    and a GET of the manifest (pylance 14 / lancedb 0.40), and a catch-up mostly finds its
    tables unchanged. The table's query handle is then at that version already: `previous`
    was taken from it, and it only moves forward. A table dropped and recreated at exactly
    the version number last seen would go unnoticed until its next commit; hymem drops
    tables only in a folder's `repair`, and replicas follow object stores."""
    if previous is not None and _unchanged(previous):
        return previous
    if not lance.open_existing(name):
        return Snapshot(0, {})
    table = lance.table(name)
    frags: dict[int, Fragment] = {}
    with _pinned_read():  # the version checked out may be pruned before its manifest is read
        table.checkout_latest()
        ds = table.to_lance()  # pinned at the version just checked out
        for frag in ds.get_fragments():
            meta = frag.metadata
            files = tuple(f.path for f in meta.files)
            frags[frag.fragment_id] = Fragment(frag.fragment_id, files, _deletion_marker(meta))
    return Snapshot(int(ds.version), frags, ds)


def offsets(addresses: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Row addresses -> offsets within their fragment (uint32)."""
    masked = pc.bit_wise_and(addresses, pa.scalar(OFFSET_MASK, pa.uint64()))
    return pc.cast(masked, pa.uint32())


def fragment_batches(
    snap: Snapshot, fragment_id: int, columns: Sequence[str], batch_size: int
) -> Iterator[pa.RecordBatch]:
    """The live rows of one fragment (deletions applied), with their `_rowaddr`;
    SnapshotPruned when the snapshot's files are pruned under the read."""
    with _pinned_read():
        frag = snap.dataset.get_fragment(fragment_id)
        batches = frag.to_batches(
            columns=list(columns), with_row_address=True, batch_size=batch_size
        )
        yield from batches


def live_offsets(snap: Snapshot, fragment_id: int) -> pa.Array:
    """Offsets of the fragment's live rows: reads its deletion file, no row data."""
    with _pinned_read():
        frag = snap.dataset.get_fragment(fragment_id)
        table = frag.to_table(columns=[], with_row_address=True)
    return offsets(table.column(ROW_ADDR))


__all__ = [
    "ROW_ADDR",
    "Fragment",
    "Snapshot",
    "SnapshotPruned",
    "fragment_batches",
    "latest_snapshot",
    "live_offsets",
    "offsets",
]
