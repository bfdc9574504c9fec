"""Erasing a user for real: every row of theirs deleted, then every file that held its bytes
rewritten or removed.

A LanceDB delete only marks rows deleted: their bytes stay in the data files, and in every older
table version, until a compaction rewrites the fragment. LanceDB's own `optimize()` rewrites a
fragment only once 10 % of it is deleted, so one user's rows among many would stay on disk.
Here each table's fragments with deletions are compacted with a threshold of zero (pylance's
`compact_files`), then every older version is pruned at once, so the deleted rows' data files,
deletion files, manifests and index files are all removed. Tantivy's segments are immutable and
hold deleted documents until merged, so the lexical index is rebuilt aside from LanceDB and the
old folder deleted (`LexicalIndex.rebuild(fresh=True)`).

The erase is journaled (`journal.json`, op `erase_user`): a crash anywhere is finished by the
next open, because every step is idempotent. Pruning every older version pulls files from under
any read or commit still on an older version (a search in this process, another worker's write
to a user of the same tables): LanceDB reports a file "Not found", and `LanceTables` runs that
call again on the newest version (bounded; see `lance.tables.PRUNED_ATTEMPTS`), so neighbours
see no error; erasure is rare and this is the price of the bytes being gone.
"""

from __future__ import annotations

from datetime import timedelta

from hymem.core.logging import get_logger
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance import upkeep
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.feed import LexicalFeed
from hymem.indexes.ports import LineLog
from hymem.indexes.store.journals import Journals

log = get_logger("hymem.indexes.store.erasure")

ERASE_OP = "erase_user"
USER_TABLES = (S.TURNS, S.SEGMENTS, S.SUMMARIES, S.TRACES)


class Eraser:
    """Runs under the store's write lock (the caller, `Store`, holds it)."""

    def __init__(
        self,
        lance: LanceTables,
        sync: LexicalFeed,
        journals: Journals,
        sleep_log: LineLog,
        *,
        sole_writer: bool,
    ) -> None:
        """`sole_writer`: no other process writes the tables (see `purge`)."""
        self._lance = lance
        self._sync = sync
        self._journals = journals
        self._sleep_log = sleep_log
        self._sole_writer = sole_writer

    def erase(self, user_id: str) -> dict[str, int]:
        """Delete and purge, then sweep: rows of the user that landed while this ran (a trace
        another worker wrote of an ask it was answering) are erased too."""
        journal = self._journals.of(user_id)
        journal.begin({"op": ERASE_OP, "user_id": user_id})
        removed = self.finish(user_id)
        self._lance.refresh()  # what other workers committed meanwhile
        if any(self._count(user_id).values()):
            late = self.finish(user_id)
            log.info("store.erase_swept", user_id=user_id, **late)
            removed = {table: removed[table] + late[table] for table in USER_TABLES}
        journal.clear()
        log.info("store.erased", user_id=user_id, **removed)
        return removed

    def _count(self, user_id: str) -> dict[str, int]:
        where = F.eq("user_id", user_id)
        return {
            table: self._lance.count(table, where) if self._lance.open_existing(table) else 0
            for table in USER_TABLES
        }

    def finish(self, user_id: str) -> dict[str, int]:
        """Delete the user's rows and sleep-journal lines (none left after a crash: then
        nothing), then purge. The lines go here, inside the journaled erase, so a crash
        cannot leave them (an object store's are rows of a table this purge rewrites too)."""
        removed = self._count(user_id)
        where = F.eq("user_id", user_id)
        for table, n in removed.items():
            if n:
                self._lance.delete(table, where)
        self._sleep_log.delete_user(user_id)
        self.purge()
        return removed

    def purge(self) -> None:
        """Rewrite every fragment holding deleted rows, prune every older version, rebuild the
        lexical index aside: afterwards no file under the folder holds a deleted row.

        Files no version references (a failed commit's leftovers) are deleted too only when
        this process is the tables' sole writer (a folder): on an object store another
        worker's commit in flight has written its data files and not yet the manifest naming
        them, and deleting them would leave its acknowledged rows pointing at nothing. There
        LanceDB deletes such leftovers once they are 7 days old. The erased user's own writes
        are fenced by its lease, so none of theirs is in flight."""
        for table in sorted(self._lance.names()):
            self._lance.open_existing(table)
            upkeep.purge_deleted(
                self._lance, table, keep=timedelta(0), unverified=self._sole_writer
            )
        self._sync.after_purge()


__all__ = ["ERASE_OP", "USER_TABLES", "Eraser"]
