"""The management half of `Memory`'s API: list, read, correct, delete, erase, export, import.

`Memory` inherits it, so users see one class; this file only validates arguments and hands
each call to its component (`Editor`, `erase_user`, `portable`), as the facade does for the
write and read paths."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymem.errors import ReadOnlyStoreError
from hymem.filters import Filter, scoped
from hymem.manage.editor import Editor
from hymem.manage.erase import ErasureReport, erase_user
from hymem.manage.models import MemoryItem, Page, RecordLevel, StatusFilter
from hymem.manage.portable import (
    ExportReport,
    ImportReport,
    export_user,
    import_file,
    read_export_user,
)
from hymem.types import SummaryRecord
from hymem.validation import check_memory_text, check_record_id, check_user_id

if TYPE_CHECKING:
    from hymem.config import MemoryConfig
    from hymem.indexes.protocol import Storage
    from hymem.read.reader import Reader
    from hymem.sleep.consolidator import Consolidator
    from hymem.write.ingestor import Ingestor


class ManagementAPI:
    """Methods of `Memory`; see each one. Every id is scoped by `user_id`: another user's id is
    `NotFoundError`, exactly like an id that never existed."""

    config: MemoryConfig
    _store: Storage
    _editor: Editor
    _reader: Reader
    _ingestor: Ingestor
    _consolidator: Consolidator
    _since_sleep: dict[str, int]
    _versions_lock: threading.RLock

    def _check_open(self) -> None:
        raise NotImplementedError

    @contextmanager
    def _writing(self, user_id: str) -> Iterator[bool]:
        """The right to write `user_id` for the block (an object store's per-user lease; a
        folder's single writer always holds it). When another worker wrote the user since
        this process did, what this process cached of the user is dropped first. A read-only
        memory holds nothing: its write raises its own typed error."""
        if self._store.read_only:
            yield False
            return
        with self._store.writing(user_id) as stale:
            if stale:
                self._ingestor.forget(user_id)
                self._consolidator.journal.reload_user(user_id)
            yield stale

    def history(self, summary_id: str, *, user_id: str) -> list[SummaryRecord]:
        """Every version of a summary, oldest first."""
        self._check_open()
        check_user_id(user_id)
        return self._consolidator.history(summary_id, user_id=user_id)

    def restore(self, summary_id: str, *, user_id: str) -> SummaryRecord:
        """Reactivate a superseded or deleted version (and retire what replaced it)."""
        self._check_open()
        check_user_id(user_id)
        with self._versions_lock, self._writing(user_id):  # this order everywhere (sleep's)
            return self._consolidator.restore(summary_id, user_id=user_id)

    def get(self, memory_id: str, *, user_id: str) -> MemoryItem:
        """One summary with every version's id, the turns it rests on and its raw segment."""
        self._check_open()
        check_user_id(user_id)
        return self._editor.get(check_record_id(memory_id), user_id)

    def get_all(
        self,
        *,
        user_id: str,
        level: RecordLevel = "summary",
        status: StatusFilter | None = None,
        limit: int = 100,
        cursor: str | None = None,
        filters: Mapping[str, Any] | Filter | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Page:
        """One page of the user's records at `level`; pass `page.next_cursor` back for the next.
        `status` defaults to active summaries and all turns; `filters`, agent_id and run_id
        select by metadata as in `search`; pages never load the whole memory. A cursor is only
        valid with the same level, status and filters."""
        self._check_open()
        check_user_id(user_id)
        chosen = scoped(filters, agent_id=agent_id, run_id=run_id)
        return self._editor.get_all(
            user_id, level=level, status=status, limit=limit, cursor_text=cursor, filters=chosen
        )

    def update(self, memory_id: str, text: str, *, user_id: str) -> SummaryRecord:
        """Correct a memory: a new active version with `text` replaces it (see `history`)."""
        self._check_open()
        check_user_id(user_id)
        memory_id, text = check_record_id(memory_id), check_memory_text(text)
        with self._versions_lock, self._writing(user_id):
            return self._editor.update(memory_id, text, user_id)

    def delete(self, memory_id: str, *, user_id: str) -> SummaryRecord:
        """Retire a memory as a deleted version (restorable with `restore`); returns it."""
        self._check_open()
        check_user_id(user_id)
        memory_id = check_record_id(memory_id)
        with self._versions_lock, self._writing(user_id):
            return self._editor.delete(memory_id, user_id)

    def erase_user(self, user_id: str) -> ErasureReport:
        """Remove everything of `user_id` from the disk for real (README, "Erasing a user")."""
        self._check_open()
        check_user_id(user_id)
        if self._store.read_only:
            raise ReadOnlyStoreError("this memory was opened read-only: erasure writes")
        self._reader.flush_traces()  # a queued trace must not land after the erase
        # No add, flush, sleep or correction meanwhile; the ingestor then forgets the user.
        with self._versions_lock, self._writing(user_id), self._ingestor.exclusive(user_id):
            report = erase_user(
                self._store,
                user_id,
                journal=self._consolidator.journal,
                cache_dir=self.config.llm_cache_dir,
            )
        self._since_sleep.pop(user_id, None)
        return report

    def export(self, out: str | Path, *, user_id: str) -> ExportReport:
        """Write every turn, segment and summary version of the user to `out` (JSON Lines)."""
        self._check_open()
        check_user_id(user_id)
        return export_user(self._store, user_id, Path(out))

    def import_records(self, source: str | Path, *, user_id: str | None = None) -> ImportReport:
        """Read a file `export` wrote into this memory (as `user_id` when given)."""
        self._check_open()
        if user_id is not None:
            check_user_id(user_id)
        if self._store.read_only:
            raise ReadOnlyStoreError("this memory was opened read-only: import writes")
        target = user_id or read_export_user(Path(source))
        with self._versions_lock, self._writing(target), self._ingestor.exclusive(target):
            return import_file(self._store, self.embedder, Path(source), user_id=user_id)

    # --- the store as a whole ------------------------------------------------------------
    def stats(self, *, user_id: str | None = None) -> dict[str, int]:
        self._check_open()
        return self._store.counts(user_id)

    def reindex(self) -> dict[str, int]:
        self._check_open()
        return self._store.reindex()

    def refresh(self) -> dict[str, int]:
        """See every other worker's writes now (a store on an object store; searches see them
        within `refresh_s` anyway). Call it before a search that must see the latest writes.
        Returns what the catch-up did; {} for a local folder, which has one writer."""
        self._check_open()
        return self._store.catch_up()


__all__ = ["ManagementAPI"]
