"""Crash repair on open: settle a leftover journal, then bring the lexical index back in step.

A multi-table write (`commits.CommitWriter`) records its intent in `journal.json` and removes it
when done. On open a leftover journal is settled before anything is served:

* commit_segments: if every journaled segment and summary is in LanceDB the commit is rolled
  forward (turns marked stored, its status changes of older summaries applied again);
  otherwise its rows are deleted, the older summaries it changed get back the status the
  journal kept (`prior`), and its turns are set back to pending, so the next flush redoes it.
  Either way no half-commit is ever served.
* apply_summary_changes: if every new version is in LanceDB the status changes are re-applied
  (idempotent); otherwise the partial new versions are deleted.
* erase_user: finished (every step of an erase is idempotent; `erasure.Eraser`).
* a journal that cannot be read, or is not one of these: settled by the rows' own state
  (`repair.RowSettler`).

Tantivy is then rebuilt whenever its sync record or its per-level counts disagree with LanceDB,
or it cannot be read at all (`lexical_sync.LexicalSync`). A read-only store repairs nothing: it
warns, and stops searching a lexical index it cannot use (dense search still serves).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hymem.core.logging import get_logger
from hymem.core.types import StatusChange, TurnStatus
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.lexical.feed import LexicalFeed
from hymem.indexes.store.commits import WITHDRAW_OP, CommitWriter
from hymem.indexes.store.erasure import ERASE_OP, Eraser
from hymem.indexes.store.journals import Journals
from hymem.indexes.store.repair import RowSettler, well_formed

log = get_logger("hymem.indexes.store.store")


class Recovery:
    """Runs once per open, before the store serves anything."""

    def __init__(
        self,
        folder: Path | str,
        journals: Journals,
        sync: LexicalFeed,
        writer: CommitWriter,
        turns: TurnLog,
        lance: LanceTables,
        eraser: Eraser,
    ) -> None:
        self._folder = folder
        self._journals = journals
        self._sync = sync
        self._writer = writer
        self._turns = turns
        self._lance = lance
        self._eraser = eraser
        # Users whose failed commit could not be rolled back at once (the store was down): the
        # caller was told it failed, so its journal is rolled back, never forward, before the
        # user's next write reads or writes anything.
        self._roll_back_due: set[str | None] = set()

    def due(self, user_id: str | None) -> bool:
        """Whether a failed commit of this user still waits to be rolled back."""
        return user_id in self._roll_back_due

    def repair_on_open(self, *, read_only: bool) -> None:
        if read_only:
            self._check_read_only()
            return
        if self._journals.shared:  # per-user journals are settled under the user's lease
            journal = self._journals.of(None)
            entry = journal.pending()
            if entry is not None:
                self.settle(entry)
        reason = self._sync.disagreement()
        if reason is not None:
            log.warning("store.lexical_rebuild", path=str(self._folder), reason=reason)
            self._sync.rebuild()
        if self._journals.shared:
            self._journals.of(None).clear()

    def _check_read_only(self) -> None:
        """Warn about what a writer would repair; stop searching an index that is unusable
        (damaged, missing, or with an unreadable sync record) rather than trusting it."""
        unusable = self._sync.unusable()
        if unusable is not None:
            log.warning("store.lexical_unavailable", path=str(self._folder), reason=unusable)
            self._sync.disable(unusable)
            return
        reason = self._sync.disagreement()
        if reason:
            log.warning("store.lexical_stale", path=str(self._folder), reason=reason)

    def settle_leftover(self, user_id: str | None = None) -> None:
        """A journaled write that failed (in this process, a full disk say, or in a writer of
        this user that died) left its journal: settle it, as an open would, before the next
        one overwrites the record of it."""
        journal = self._journals.of(user_id)
        entry = journal.pending()
        if entry is not None and user_id in self._roll_back_due:
            self.roll_back(entry)
            journal.clear()
        elif entry is not None:
            self.settle(entry, user_id)
            journal.clear()
        self._roll_back_due.discard(user_id)

    def after_failure(self, user_id: str | None = None, *, roll_back: bool = False) -> None:
        """After a failed journaled write: settle it now if the store lets us (a disk still
        full may not); otherwise the journal stays for the next write or open to settle.
        `roll_back`: undo it even if every row landed (its caller was told it failed)."""
        if roll_back:
            self._roll_back_due.add(user_id)  # until it is done, here or on the next write
        try:
            self.settle_leftover(user_id)
        except Exception as exc:  # the original failure is what the caller must see
            log.warning("store.settle_deferred", path=str(self._folder), error=repr(exc))

    def settle(self, entry: dict[str, Any], user_id: str | None = None) -> None:
        """Roll a journaled write forward or back (see the module docstring), then re-index.
        `user_id`: the journal is that user's alone (an object store), so an unreadable one
        is settled by that user's rows only."""
        if not well_formed(entry):
            self._settle_by_rows(entry, user_id)
        elif entry["op"] == ERASE_OP:
            self._eraser.finish(entry["user_id"])
            log.warning("store.journal_settled", op=ERASE_OP, user_id=entry["user_id"])
        elif entry["op"] == WITHDRAW_OP:
            self._writer.finish_withdraw(entry)
            log.warning("store.journal_settled", op=WITHDRAW_OP, user_id=entry["user_id"])
        else:
            if entry["op"] == "commit_segments":
                complete = self._settle_commit(entry)
            else:
                complete = self._settle_changes(entry)
            log.warning(
                "store.journal_settled",
                op=entry["op"],
                user_id=entry["user_id"],
                rolled="forward" if complete else "back",
            )
        self._sync.rebuild()

    def roll_back(self, entry: dict[str, Any]) -> None:
        """Undo a commit_segments that failed in this process, even if all its rows landed:
        its caller was told it failed, so its turns must read as pending, not stored."""
        if entry.get("op") != "commit_segments":
            self.settle(entry)
            return
        user = entry["user_id"]
        self._writer.replace_rows(user, entry["segment_ids"], entry["summary_ids"])
        self._writer.restore_prior(user, entry.get("prior") or [])
        self._turns.set_status(user, entry["turns"], TurnStatus.PENDING)
        log.warning("store.journal_settled", op=entry["op"], user_id=user, rolled="back")
        self._sync.rebuild()

    def _settle_by_rows(self, entry: dict[str, Any], user_id: str | None) -> None:
        error = entry.get("error") or f"unrecognised entry (op {entry.get('op')!r})"
        where = self._journals.of(user_id).file
        log.warning("store.journal_unreadable", path=str(where), error=error)
        users = None if user_id is None else [user_id]
        repair = RowSettler(self._lance, self._writer, self._turns).settle(users=users)
        log.warning("store.journal_settled", op="unknown", rolled="by_rows", **repair.as_dict())

    def _settle_commit(self, entry: dict[str, Any]) -> bool:
        user, seg_ids, sum_ids = entry["user_id"], entry["segment_ids"], entry["summary_ids"]
        complete = self._writer.all_present(S.SEGMENTS, user, seg_ids) and self._writer.all_present(
            S.SUMMARIES, user, sum_ids
        )
        if complete:
            changes = [StatusChange.model_validate(c) for c in entry.get("changes") or []]
            self._writer.apply_status(user, changes)
            self._turns.set_status(user, entry["turns"], TurnStatus.STORED)
        else:
            self._writer.replace_rows(user, seg_ids, sum_ids)
            self._writer.restore_prior(user, entry.get("prior") or [])
            self._turns.set_status(user, entry["turns"], TurnStatus.PENDING)
        return complete

    def _settle_changes(self, entry: dict[str, Any]) -> bool:
        user = entry["user_id"]
        complete = self._writer.all_present(S.SUMMARIES, user, entry["new_ids"])
        if complete:
            changes = [StatusChange.model_validate(c) for c in entry["changes"]]
            self._writer.apply_status(user, changes)
        else:
            self._writer.delete_summaries(user, entry["new_ids"])
        return complete


__all__ = ["Recovery"]
