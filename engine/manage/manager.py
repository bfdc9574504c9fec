"""`Manager`: the management calls of `Memory` -- list, read, correct, delete, restore, erase,
export, import, and the store-wide stats, reindex and refresh.

`Memory` keeps these methods on its public surface and hands each call here unchanged (one
generated line each, `hymem.api.memory`); this class checks the call's arguments (the edge for these
calls) and hands it to the component that implements it (`Editor`, `Consolidator`, `erase_user`,
`portable`), under the store's `WriteGuard` where it writes. Every id is scoped by `user_id`:
another user's id is `NotFoundError`, exactly like an id that never existed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymem.backfill.histories import UserHistory
from hymem.backfill.runner import Backfill, BackfillReport
from hymem.core.errors import ReadOnlyStoreError
from hymem.core.filters import Filter, scoped
from hymem.core.time import parse_time
from hymem.core.types import SummaryRecord, TurnRecord
from hymem.core.validation import check_memory_text, check_record_id, check_user_id
from hymem.imports.chat_import import ChatImportReport, import_chat
from hymem.llm.cache import cache_owner
from hymem.manage.audit import AuditReport, audit_store
from hymem.manage.erase import ErasureReport, erase_user
from hymem.manage.models import MemoryItem, Page, RecordLevel, StatusFilter
from hymem.manage.portable import (
    ExportReport,
    ImportReport,
    export_user,
    import_file,
    read_export_user,
)
from hymem.manage.profile import (
    DEFAULT_PROFILE_TOKENS,
    Profile,
    build_profile,
    check_profile_tokens,
)
from hymem.read.replay import Replay
from hymem.read.trace_record import Trace, traces_from_rows

if TYPE_CHECKING:
    from hymem.core.config import MemoryConfig
    from hymem.embed.embedders import Embedder
    from hymem.indexes.ports import Storage
    from hymem.manage.editor import Editor
    from hymem.read.reader import Reader
    from hymem.sleep.auto import AutoSleep
    from hymem.sleep.consolidator import Consolidator
    from hymem.write.guard import WriteGuard
    from hymem.write.ingestor import Ingestor


class Manager:
    """Built by `Memory` with the parts the management calls touch: the store and embedder
    (export, import), the config (the model cache an erasure clears), the write guard, the
    editor (reads, corrections), the consolidator (versions, the sleep journal), the ingestor
    (held off while a user is rewritten underneath), the reader (its queued traces are
    written before an erasure) and the auto-sleep counter (reset by an erasure)."""

    def __init__(
        self,
        store: Storage,
        embedder: Embedder,
        config: MemoryConfig,
        *,
        guard: WriteGuard,
        editor: Editor,
        consolidator: Consolidator,
        ingestor: Ingestor,
        reader: Reader,
        auto_sleep: AutoSleep,
        backfill: Backfill,
    ) -> None:
        self._store, self._embedder, self._config = store, embedder, config
        self._guard, self._editor, self._consolidator = guard, editor, consolidator
        self._ingestor, self._reader, self._auto_sleep = ingestor, reader, auto_sleep
        self._backfill = backfill

    # --- versions ------------------------------------------------------------------------
    def history(self, summary_id: str, *, user_id: str) -> list[SummaryRecord]:
        """Every version of a summary, oldest first."""
        return self._consolidator.history(summary_id, user_id=check_user_id(user_id))

    def restore(self, summary_id: str, *, user_id: str) -> SummaryRecord:
        """Make a superseded or deleted version its memory's one active version (every other
        active version retires); VersionConflictError if it is that already."""
        return self._consolidator.restore(summary_id, user_id=check_user_id(user_id))

    # --- records -------------------------------------------------------------------------
    def get(self, memory_id: str, *, user_id: str) -> MemoryItem:
        """One summary with every version's id, the turns it rests on and its raw segment."""
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
        check_user_id(user_id)
        chosen = scoped(filters, agent_id=agent_id, run_id=run_id)
        return self._editor.get_all(
            user_id, level=level, status=status, limit=limit, cursor_text=cursor, filters=chosen
        )

    def update(self, memory_id: str, text: str, *, user_id: str) -> SummaryRecord:
        """Correct a memory: a new active version with `text` replaces it (see `history`)."""
        check_user_id(user_id)
        return self._editor.update(check_record_id(memory_id), check_memory_text(text), user_id)

    def delete(self, memory_id: str, *, user_id: str) -> SummaryRecord:
        """Retire a memory as a deleted version (restorable with `restore`); returns it."""
        check_user_id(user_id)
        return self._editor.delete(check_record_id(memory_id), user_id)

    def profile(self, *, user_id: str, max_tokens: int = DEFAULT_PROFILE_TOKENS) -> Profile:
        """The user's current facts (one line each, newest value of each fact), within
        `max_tokens`: what an agent puts in its system prompt. Kept by writes and sleep."""
        check_user_id(user_id)
        return build_profile(self._store, user_id, check_profile_tokens(max_tokens))

    def audit(self, *, user_id: str | None = None) -> AuditReport:
        """How healthy each user's memory is (of one user, or of all): summaries their source
        turns do not support, duplicate clusters, active contradictions, ended facts still
        served and records without links. `sleep()` repairs what it can."""
        if user_id is not None:
            check_user_id(user_id)
        return audit_store(self._store, user_id)

    def pending(self, *, user_id: str) -> list[TurnRecord]:
        """Turns accepted but not yet summarised (waiting for the buffer or a retry)."""
        return self._ingestor.pending(user_id=check_user_id(user_id))

    def traces(
        self, *, user_id: str | None = None, since: datetime | str | None = None
    ) -> list[Trace]:
        """Per-ask traces as typed `Trace` records, oldest first (the dashboard's input);
        `since` takes what every time argument takes (`hymem.core.time.parse_time`)."""
        if user_id is not None:
            check_user_id(user_id)
        bound = None if since is None else parse_time(since, "since")
        self._reader.flush_traces()  # trace rows are written in the background; wait for them
        return traces_from_rows(self._store.read_traces(user_id=user_id, since=bound))

    def replay(self, trace_id: str, *, user_id: str) -> Replay:
        """Rebuild what a past `ask` read (the summary versions and segments, by id, as they
        were, even if replaced or deleted since) and ask its question again with the same
        depth, sizes, filter and `as_of` against today's memory: `Replay.then` beside
        `Replay.now`. Records erased since are `missing`. The new ask leaves its own trace."""
        check_user_id(user_id)
        with cache_owner(user_id):
            return self._reader.replay(check_record_id(trace_id, "trace_id"), user_id)

    # --- whole users ---------------------------------------------------------------------
    def erase_user(self, user_id: str) -> ErasureReport:
        """Remove everything of `user_id` from the disk for real (docs/library.md, "Erasing a
        user").
        The user's asks meanwhile raise ErasureInProgressError; adds and flushes wait."""
        check_user_id(user_id)
        if self._store.read_only:
            raise ReadOnlyStoreError("this memory was opened read-only: erasure writes")
        # No ask of the user meanwhile (those running end first, their traces written), no
        # add, flush, sleep or correction; the ingestor then forgets the user.
        with (
            self._reader.erasing(user_id),
            self._guard.versions(user_id),
            self._ingestor.exclusive(user_id),
        ):
            report = erase_user(
                self._store,
                user_id,
                journal=self._consolidator.journal,
                cache_dir=self._config.llm_cache_dir,
            )
        self._auto_sleep.forget(user_id)
        return report

    def export(self, out: str | Path, *, user_id: str) -> ExportReport:
        """Write every turn, segment and summary version of the user to `out` (JSON Lines)."""
        return export_user(self._store, check_user_id(user_id), Path(out))

    def import_records(self, source: str | Path, *, user_id: str | None = None) -> ImportReport:
        """Read a file `export` wrote into this memory (as `user_id` when given)."""
        if user_id is not None:
            check_user_id(user_id)
        if self._store.read_only:
            raise ReadOnlyStoreError("this memory was opened read-only: import writes")
        target = user_id or read_export_user(Path(source))
        with self._guard.versions(target), self._ingestor.exclusive(target):
            return import_file(self._store, self._embedder, Path(source), user_id=user_id)

    def backfill(
        self,
        histories: Sequence[UserHistory],
        *,
        ray: str | None = None,
        workers: int = 1,
        progress: Callable[[int], None] | None = None,
    ) -> BackfillReport:
        """Store many users' whole histories (`hymem.backfill.histories`), prepared in this
        process or on `workers` Ray actors (`ray`: "local", "auto" or a cluster address; needs
        `hymem[ray]`) and committed as `add()` then `flush()` would commit them. A run killed
        part-way and run again stores each turn once; users already stored whole are skipped.
        `progress(n)` hears each user's turn count when it is done."""
        if self._store.read_only:
            raise ReadOnlyStoreError("this memory was opened read-only: backfill writes")
        return self._backfill.run(histories, ray=ray, workers=workers, progress=progress)

    def import_chat(
        self,
        source: str | Path,
        *,
        user_id: str,
        format: str,
        progress: Callable[[int, int], None] | None = None,
    ) -> ChatImportReport:
        """Store a ChatGPT or Claude data export (`conversations.json`) or JSON Lines of
        messages as `user_id`'s turns: a conversation per session, only the branch the user
        ended on, the export's message ids as turn ids (a re-import stores nothing twice).
        What is not a turn (system messages, other branches, absent attachments) is counted in
        the report. `progress(done, total)` counts conversations."""
        check_user_id(user_id)
        if self._store.read_only:
            raise ReadOnlyStoreError("this memory was opened read-only: import writes")
        return import_chat(
            self._ingestor, Path(source), fmt=format, user_id=user_id, progress=progress
        )

    # --- the store as a whole ------------------------------------------------------------
    def stats(self, *, user_id: str | None = None) -> dict[str, int]:
        return self._store.counts(user_id)

    def users(self) -> list[str]:
        """Every user with turns or summaries in the store."""
        return self._store.users()

    def reindex(self, *, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        """Rebuild the lexical (BM25) index from the tables, the source of truth; returns
        the rows indexed per level. `progress(n)` is told of each batch of `n` rows."""
        return self._store.reindex(progress=progress)

    def optimize(self) -> None:
        """Compact the tables, prune old versions and build every due vector index now
        (what the background maintainer does as needed): before serving readers elsewhere."""
        self._store.optimize()

    def refresh(self) -> dict[str, int]:
        """See every other worker's writes now (a store on an object store; searches see them
        within `refresh_s` anyway). Call it before a search that must see the latest writes.
        Returns what the catch-up did; {} for a local folder, which has one writer."""
        return self._store.catch_up()


__all__ = ["Manager"]
