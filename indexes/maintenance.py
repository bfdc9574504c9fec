"""Compaction cadence and index building for the LanceDB tables.

Every LanceDB `add`, `delete` or `merge_insert` leaves a new fragment or deletion file, and
queries slow down as they pile up, so after every `OPTIMIZE_EVERY` writes (or as soon as a table
crosses the size where an ANN index pays off) the tables are compacted and indexed. The caller
holds the store's write lock.
"""

from __future__ import annotations

from hymem.indexes import schema as S
from hymem.indexes.lexical_sync import LexicalSync
from hymem.indexes.vectors import LanceTables

# Writes between automatic compactions: with hymem's batched commits 64 fragments still query
# fast, and compacting more often costs more than it saves on a write-heavy ingest.
OPTIMIZE_EVERY = 64
# Below this many rows flat search is fast enough; past it an IVF_PQ index wins (measured in
# ARCHITECTURE.md §11: flat search is ~20x slower than numpy and grows linearly).
VECTOR_INDEX_MIN_ROWS = 20_000

# Columns given a scalar (BTREE) index once a table is big enough: what every filter names.
_SCALAR_COLUMNS: dict[str, list[str]] = {
    S.SUMMARIES: ["id", "user_id"],
    S.SEGMENTS: ["id", "user_id"],
    S.TURNS: ["id", "user_id"],
    S.TRACES: [],
}
_VECTOR_TABLES = (S.SUMMARIES, S.SEGMENTS)


class Compactor:
    """Counts writes and compacts/indexes the tables when they are due."""

    def __init__(self, lance: LanceTables, sync: LexicalSync, vector_index_min_rows: int) -> None:
        self._lance = lance
        self._sync = sync
        self.vector_index_min_rows = vector_index_min_rows
        self._writes = 0

    def note_write(self, *, vector_tables: bool = True) -> None:
        """Count one write; optimize when the cadence or a table's size says so. A write that
        touched no vector table (a turn append) cannot make an ANN index due, so the row
        counts are not taken for it (three count queries per one-turn add otherwise)."""
        self._writes += 1
        if self._writes >= OPTIMIZE_EVERY or (vector_tables and self._needs_vector_index()):
            self.optimize()

    def _needs_vector_index(self) -> bool:
        return any(
            self._lance.count(t) >= self.vector_index_min_rows and not self._lance.vector_indexed(t)
            for t in _VECTOR_TABLES
        )

    def optimize(self) -> None:
        """Compact fragments; build the ANN index past vector_index_min_rows. Compaction moves
        LanceDB versions on, so the lexical sync record is renewed (the rows are unchanged)."""
        for table, cols in _SCALAR_COLUMNS.items():
            vec_rows = self.vector_index_min_rows if table in _VECTOR_TABLES else None
            self._lance.optimize(table, vector_min_rows=vec_rows, scalar_columns=cols)
        self._writes = 0
        self._sync.record()


__all__ = ["OPTIMIZE_EVERY", "VECTOR_INDEX_MIN_ROWS", "Compactor"]
