"""Crash repair and the lexical index's sync record (mixed into `Store`).

A multi-table write first records its intent in `journal.json` (atomic rename) and removes it
when done. On open a leftover journal is settled before anything is served:

* commit_segments: if every journaled segment and summary is in LanceDB the commit is rolled
  forward (turns marked stored); otherwise its rows are deleted and its turns set back to
  pending, so the next flush redoes it. Either way no half-commit is ever served.
* apply_summary_changes: if every new version is in LanceDB the status changes are re-applied
  (idempotent); otherwise the partial new versions are deleted.

Tantivy is then rebuilt whenever its sync record (the LanceDB table versions it last matched)
or its per-level counts disagree with LanceDB. `reindex` and `optimize` live here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hymem.indexes import filters as F
from hymem.indexes import schema as S
from hymem.indexes.lexical import LEXICAL_SCHEMA_VERSION, LexDoc
from hymem.indexes.lock import read_json, write_json_atomic
from hymem.logging import get_logger
from hymem.types import Level, StatusChange, SummaryStatus, TurnStatus

if TYPE_CHECKING:
    import threading
    from pathlib import Path

    from hymem.indexes.lexical import LexicalIndex
    from hymem.indexes.vectors import LanceTables

log = get_logger("hymem.indexes.store")

JOURNAL_FILE = "journal.json"
SYNC_FILE = "lexical_sync.json"
ID_CHUNK = 500  # ids per IN (...) clause
OPTIMIZE_EVERY = 64  # writes between automatic compactions
LEX_COLS = ["id", "user_id", "text", "time_start", "time_end"]


def chunks(ids: Sequence[str], size: int = ID_CHUNK) -> Iterator[list[str]]:
    ids = list(dict.fromkeys(ids))
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


def _reporting(docs: Iterator[LexDoc], progress: Callable[[int], None]) -> Iterator[LexDoc]:
    n = 0
    for doc in docs:
        yield doc
        n += 1
        if n == 1000:
            progress(n)
            n = 0
    if n:
        progress(n)


def summary_doc(r: dict[str, Any]) -> LexDoc:
    return LexDoc(
        r["id"], r["user_id"], Level.SUMMARY, r["text"], r["status"], r["time_start"], r["time_end"]
    )


def segment_doc(r: dict[str, Any]) -> LexDoc:
    return LexDoc(
        r["id"], r["user_id"], Level.SEGMENT, r["text"], "active", r["time_start"], r["time_end"]
    )


class RecoveryMixin:
    path: Path
    read_only: bool
    vector_index_min_rows: int
    _lance: LanceTables
    _lex: LexicalIndex
    _writes_since_optimize: int

    if TYPE_CHECKING:
        _write_lock: threading.RLock

        def _check_writable(self) -> None: ...
        def _set_turns(
            self, user_id: str, seg_of: dict[str, str | None], status: TurnStatus
        ) -> None: ...
        def _replace_rows(
            self, user_id: str, seg_ids: Sequence[str], sum_ids: Sequence[str]
        ) -> set[str]: ...
        def _apply_status(
            self, user_id: str, changes: Sequence[StatusChange]
        ) -> list[dict[str, Any]]: ...

    # --- journal and lexical sync --------------------------------------------------------
    def _journal(self, entry: dict[str, Any]) -> None:
        write_json_atomic(self.path / JOURNAL_FILE, entry)

    def _finish_write(self) -> None:
        self._write_sync()
        (self.path / JOURNAL_FILE).unlink(missing_ok=True)
        self._note_write()

    def _note_write(self) -> None:
        self._writes_since_optimize += 1
        if self._writes_since_optimize >= OPTIMIZE_EVERY or self._needs_vector_index():
            self.optimize()

    def _needs_vector_index(self) -> bool:
        return any(
            self._lance.count(t) >= self.vector_index_min_rows and not self._lance.vector_indexed(t)
            for t in (S.SUMMARIES, S.SEGMENTS)
        )

    def _sync_state(self) -> dict[str, Any]:
        return {
            "lexical_schema_version": LEXICAL_SCHEMA_VERSION,
            "segments": self._lance.version(S.SEGMENTS),
            "summaries": self._lance.version(S.SUMMARIES),
        }

    def _write_sync(self) -> None:
        write_json_atomic(self.path / SYNC_FILE, self._sync_state())

    def _lexical_out_of_sync(self) -> str | None:
        """Why the lexical index disagrees with LanceDB, or None when it agrees."""
        if read_json(self.path / SYNC_FILE) != self._sync_state():
            return "sync record differs from LanceDB versions"
        for level, table in ((Level.SUMMARY, S.SUMMARIES), (Level.SEGMENT, S.SEGMENTS)):
            if self._lex.count(level) != self._lance.count(table):
                return f"{level.value} counts differ"
        active = self._lance.count(S.SUMMARIES, F.eq("status", SummaryStatus.ACTIVE.value))
        if self._lex.count(Level.SUMMARY, SummaryStatus.ACTIVE.value) != active:
            return "active summary counts differ"
        return None

    def _repair_on_open(self) -> None:
        if self.read_only:
            reason = self._lexical_out_of_sync()
            if reason:
                log.warning("store.lexical_stale", path=str(self.path), reason=reason)
            return
        journal = read_json(self.path / JOURNAL_FILE)
        if journal is not None:
            self._settle_journal(journal)
        reason = self._lexical_out_of_sync()
        if reason is not None:
            log.warning("store.lexical_rebuild", path=str(self.path), reason=reason)
            self.reindex()
        (self.path / JOURNAL_FILE).unlink(missing_ok=True)

    def _settle_journal(self, journal: dict[str, Any]) -> None:
        user = journal["user_id"]
        if journal.get("op") == "commit_segments":
            seg_ids, sum_ids = journal["segment_ids"], journal["summary_ids"]
            complete = self._all_present(S.SEGMENTS, user, seg_ids) and self._all_present(
                S.SUMMARIES, user, sum_ids
            )
            if complete:
                self._set_turns(user, journal["turns"], TurnStatus.STORED)
            else:
                self._replace_rows(user, seg_ids, sum_ids)
                self._set_turns(user, journal["turns"], TurnStatus.PENDING)
            log.warning(
                "store.journal_settled",
                op="commit_segments",
                user_id=user,
                rolled="forward" if complete else "back",
            )
        elif journal.get("op") == "apply_summary_changes":
            complete = self._all_present(S.SUMMARIES, user, journal["new_ids"])
            if complete:
                self._apply_status(
                    user, [StatusChange.model_validate(c) for c in journal["changes"]]
                )
            else:
                for chunk in chunks(journal["new_ids"]):
                    where = F.conjunction([F.eq("user_id", user), F.in_list("id", chunk)])
                    self._lance.delete(S.SUMMARIES, where)
            log.warning(
                "store.journal_settled",
                op="apply_summary_changes",
                user_id=user,
                rolled="forward" if complete else "back",
            )
        self.reindex()

    def _all_present(self, table: str, user_id: str, ids: Sequence[str]) -> bool:
        want = set(ids)
        found = 0
        for chunk in chunks(sorted(want)):
            where = F.conjunction([F.eq("user_id", user_id), F.in_list("id", chunk)])
            found += self._lance.count(table, where)
        return found == len(want)

    # --- maintenance ---------------------------------------------------------------------
    def _lex_docs(self) -> Iterator[LexDoc]:
        for batch in self._lance.batches(S.SUMMARIES, None, [*LEX_COLS, "status"], 10_000):
            yield from (summary_doc(r) for r in batch.to_pylist())
        for batch in self._lance.batches(S.SEGMENTS, None, LEX_COLS, 10_000):
            yield from (segment_doc(r) for r in batch.to_pylist())

    def reindex(self, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        """Rebuild Tantivy from LanceDB; returns counts per level. `progress(n)` is called with
        the number of documents indexed since its previous call (for progress bars)."""
        self._check_writable()
        docs = self._lex_docs()
        if progress is not None:
            docs = _reporting(docs, progress)
        with self._write_lock:
            self._lex.rebuild(docs)
            self._write_sync()
        counts = {lvl.value: self._lex.count(lvl) for lvl in Level}
        log.info("store.reindex", path=str(self.path), **counts)
        return counts

    def optimize(self) -> None:
        """Compact fragments; build the ANN index past vector_index_min_rows."""
        self._check_writable()
        with self._write_lock:
            for table, cols in (
                (S.SUMMARIES, ["id", "user_id"]),
                (S.SEGMENTS, ["id", "user_id"]),
                (S.TURNS, ["id", "user_id"]),
                (S.TRACES, []),
            ):
                vec_rows = (
                    self.vector_index_min_rows if table in (S.SUMMARIES, S.SEGMENTS) else None
                )
                self._lance.optimize(table, vector_min_rows=vec_rows, scalar_columns=cols)
            self._writes_since_optimize = 0
            self._write_sync()
        log.info("store.optimize", path=str(self.path))
