"""The journaled multi-table writes: the write path's segment commit and sleep's status changes.

Each write first records its intent in `journal.json` (atomic rename), then goes LanceDB (each
add/delete/merge_insert is one atomic LanceDB commit), then Tantivy, then turn status, then the
lexical sync record; the journal is removed last. A crash anywhere in between leaves the journal
behind, and `recovery.Recovery` settles it on the next open. A lexical index found damaged
during the Tantivy step (files deleted under the running writer) is rebuilt from LanceDB, which
already holds the commit's rows, so the commit still succeeds. The caller (the `Store`) checks
that the store is writable and holds its write lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa
from hymem.core.errors import (
    CommitConflictError,
    StoreCorruptedError,
    UserInputError,
    VersionConflictError,
)
from hymem.core.logging import get_logger
from hymem.core.time import to_utc_or_none, utcnow
from hymem.core.types import (
    Level,
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    SummaryStatus,
    TurnStatus,
)
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.lexical.feed import LexicalFeed
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.sync import (
    LEX_COLS,
    SUMMARY_LEX_COLS,
    segment_doc,
    summary_doc,
)
from hymem.indexes.store.journals import Journals
from hymem.indexes.store.maintenance import Compactor

log = get_logger("hymem.indexes.store.store")

WITHDRAW_OP = "withdraw"


def check_owner(user_id: str, records: Sequence[SegmentRecord | SummaryRecord]) -> None:
    for rec in records:
        if rec.user_id != user_id:
            raise UserInputError(f"{type(rec).__name__} {rec.id!r} belongs to another user")


def check_unclaimed(
    user_id: str, seg_of: dict[str, str | None], owners: dict[str, str], seg_ids: Sequence[str]
) -> None:
    """Refuse a commit that would put a turn in a second live segment: every turn it marks
    stored must be pending, or held by one of the segments it re-commits (a retry)."""
    mine = set(seg_ids)
    taken = sorted(t for t in seg_of if owners.get(t) not in (None, *mine))
    if taken:
        shown = ", ".join(f"{t!r} (in {owners[t]!r})" for t in taken[:5])
        raise CommitConflictError(
            f"a commit for user {user_id!r} claims {len(taken)} turn(s) another segment "
            f"already holds: {shown}; nothing was written, flush again to re-read the pending "
            "turns"
        )


VersionStates = dict[str, tuple[str, str | None]]


def version_states(records: Sequence[SummaryRecord]) -> VersionStates:
    """Each version's id -> (status, superseded_by): what a version change compares."""
    return {r.id: (SummaryStatus(r.status).value, r.superseded_by) for r in records}


def check_versions(user_id: str, expect: Sequence[SummaryRecord], stored: VersionStates) -> None:
    """The compare of a version change's compare-and-swap: refuse it (VersionConflictError)
    unless the memories `expect` names hold exactly the versions it lists, each with the
    status and superseded_by listed. A writer that read them before another update, delete
    or restore of the same memory committed (the loser of a race) writes nothing."""
    check_owner(user_id, expect)
    if version_states(expect) == stored:
        return
    memories = ", ".join(sorted({repr(r.memory_id) for r in expect}))
    raise VersionConflictError(
        f"memory {memories} of user {user_id!r} changed since its versions were read (another "
        "update, delete or restore of it committed first); nothing was written: read it again "
        "(get, history) and retry if the change still applies"
    )


def fresh_segments(
    seg_ids: Sequence[str], seg_of: Mapping[str, str | None], owners: Mapping[str, str]
) -> bool:
    """Whether no earlier copy of these segments (or summaries linked to them) can be in the
    store, so `replace_rows` may skip its two reads by segment (the write path's every commit).

    A segment row exists only while its turns are stored in it, or while the journal entry of
    the commit that wrote it is open (recovery settles it before any write; `withdraw` deletes
    segments before their turns). So when every segment covers a turn of this commit and none
    of those turns is stored, no copy of them is there. A re-commit (sleep re-summarising a
    segment, a roll-forward) finds its turns stored and replaces as before. Summary ids are
    still looked up: one may move here from another segment."""
    return bool(seg_ids) and not owners and set(seg_ids) <= {s for s in seg_of.values() if s}


def covering_segments(
    segments: Sequence[SegmentRecord], stored_turn_ids: Sequence[str]
) -> dict[str, str | None]:
    """Each stored turn id -> the first given segment that covers it (None if none does)."""
    seg_of: dict[str, str | None] = dict.fromkeys(stored_turn_ids)
    for seg in segments:
        for tid in seg.turn_ids:
            if tid in seg_of and seg_of[tid] is None:
                seg_of[tid] = seg.id
    return seg_of


class CommitWriter:
    """Writes that span tables and indexes, each journaled so a crash can be settled."""

    def __init__(
        self,
        lance: LanceTables,
        lex: LexicalIndex,
        turns: TurnLog,
        journals: Journals,
        sync: LexicalFeed,
        compactor: Compactor,
        dim: int,
    ) -> None:
        self._lance = lance
        self._lex = lex
        self._turns = turns
        self._journals = journals
        self._sync = sync
        self._compactor = compactor
        self._dim = dim

    def _index(self, write: Callable[[], None]) -> None:
        """Run the Tantivy half of a commit; a damaged index is rebuilt from LanceDB instead."""
        try:
            write()
        except StoreCorruptedError as exc:
            log.warning("store.lexical_rebuild", reason=str(exc))
            self._sync.rebuild(fresh=True)

    def _finish(self, user_id: str) -> None:
        self._sync.record()
        self._journals.of(user_id).clear()
        self._compactor.note_write()

    # --- the write path's commit ---------------------------------------------------------
    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
        changes: Sequence[StatusChange] = (),
    ) -> list[dict[str, Any]]:
        """See `Storage.commit_segments`. Everything is validated before the journal. The
        rows `changes` touch are read first, and the journal keeps what they held (`prior`),
        so a commit rolled back after its changes landed puts them back (`restore_prior`).
        Returns the changed rows, for the dense cache."""
        check_owner(user_id, [*segments, *summaries])
        seg_table = S.segments_to_arrow(segments, self._dim)
        sum_table = S.summaries_to_arrow(summaries, self._dim)
        seg_ids = [s.id for s in segments]
        sum_ids = [s.id for s in summaries]
        seg_of = covering_segments(segments, stored_turn_ids)
        owners = self._turns.owners(user_id, list(seg_of))
        check_unclaimed(user_id, seg_of, owners, seg_ids)
        before = self.status_rows(user_id, changes)
        self._journals.of(user_id).begin(
            {
                "op": "commit_segments",
                "user_id": user_id,
                "segment_ids": seg_ids,
                "summary_ids": sum_ids,
                "turns": seg_of,
                "changes": [c.model_dump(mode="json") for c in changes],
                "prior": [prior_of(row) for row in before],
            }
        )
        fresh = fresh_segments(seg_ids, seg_of, owners)
        stale = self.replace_rows(user_id, [] if fresh else seg_ids, sum_ids)
        self._lance.add(S.SEGMENTS, seg_table)
        self._lance.add(S.SUMMARIES, sum_table)
        changed = self.write_status(before, changes)

        def index() -> None:
            self._lex.delete(Level.SUMMARY, user_id, stale - set(sum_ids))
            self._lex.upsert(segment_doc(r) for r in seg_table.select(LEX_COLS).to_pylist())
            self._lex.upsert(summary_doc(r) for r in sum_table.select(SUMMARY_LEX_COLS).to_pylist())
            self._lex.upsert(summary_doc(r) for r in changed)
            self._lex.commit()

        self._index(index)
        if seg_of:
            self._turns.set_status(user_id, seg_of, TurnStatus.STORED)
        self._finish(user_id)
        log.info(
            "store.commit",
            user_id=user_id,
            segments=len(seg_ids),
            summaries=len(sum_ids),
            turns=len(seg_of),
            changed=len(changed),
        )
        return changed

    def replace_rows(
        self, user_id: str, seg_ids: Sequence[str], sum_ids: Sequence[str]
    ) -> set[str]:
        """Delete earlier copies of these segments and every summary linked to them; returns
        the deleted summary ids (so the lexical index drops them too)."""
        stale: set[str] = set()
        for chunk in F.chunks(seg_ids):
            where = F.user_ids(user_id, chunk)
            if self._lance.count(S.SEGMENTS, where):
                self._lance.delete(S.SEGMENTS, where)
            linked = F.user_ids(user_id, chunk, column="segment_id")
            stale.update(r["id"] for r in self._lance.rows(S.SUMMARIES, linked, ["id"]))
        for chunk in F.chunks(sum_ids):
            where = F.user_ids(user_id, chunk)
            stale.update(r["id"] for r in self._lance.rows(S.SUMMARIES, where, ["id"]))
        self.delete_summaries(user_id, sorted(stale))
        return stale

    def delete_summaries(self, user_id: str, ids: Sequence[str]) -> None:
        for chunk in F.chunks(ids):
            self._lance.delete(S.SUMMARIES, F.user_ids(user_id, chunk))

    # --- withdrawing what an aborted import wrote ---------------------------------------
    def withdraw(
        self, user_id: str, turn_ids: Sequence[str], segment_ids: Sequence[str]
    ) -> dict[str, int]:
        """See `Storage.withdraw`. Journaled; a crash part-way is finished on the next open
        (`finish_withdraw` is idempotent)."""
        entry = {
            "op": WITHDRAW_OP,
            "user_id": user_id,
            "turn_ids": list(turn_ids),
            "segment_ids": list(segment_ids),
        }
        self._journals.of(user_id).begin(entry)
        removed = self.finish_withdraw(entry)
        self._finish(user_id)
        log.info("store.withdrawn", user_id=user_id, **removed)
        return removed

    def finish_withdraw(self, entry: dict[str, Any]) -> dict[str, int]:
        user = entry["user_id"]
        seg_ids = entry["segment_ids"]
        segments = 0
        for chunk in F.chunks(seg_ids):
            segments += self._lance.count(S.SEGMENTS, F.user_ids(user, chunk))
        stale = self.replace_rows(user, seg_ids, [])
        turns = self._turns.delete(user, entry["turn_ids"])
        orphans: dict[str, str | None] = {}
        for chunk in F.chunks(seg_ids):
            linked = F.user_ids(user, chunk, column="segment_id")
            orphans.update((r["id"], None) for r in self._lance.rows(S.TURNS, linked, ["id"]))
        self._turns.set_status(user, orphans, TurnStatus.PENDING)

        def index() -> None:
            self._lex.delete(Level.SUMMARY, user, stale)
            self._lex.delete(Level.SEGMENT, user, set(seg_ids))
            self._lex.commit()

        self._index(index)
        return {"turns": turns, "segments": segments, "summaries": len(stale)}

    # --- versioning (sleep, corrections, restore) -------------------------------------------
    def apply_summary_changes(
        self,
        user_id: str,
        new: Sequence[SummaryRecord],
        changes: Sequence[StatusChange],
        expect: Sequence[SummaryRecord] | None = None,
    ) -> list[dict[str, Any]]:
        """See `Storage.apply_summary_changes`. The new versions and the retired ones go to
        LanceDB in one merge_insert, so a reader sees the memory before the change or after
        it, never both versions active; `expect` is checked first (the caller holds the
        write lock). Returns the changed rows (vectors included), for the dense cache."""
        check_owner(user_id, new)
        if expect is not None:
            check_versions(user_id, expect, self.stored_versions(user_id, expect))
        table = S.summaries_to_arrow(new, self._dim)
        new_ids = [s.id for s in new]
        self._journals.of(user_id).begin(
            {
                "op": "apply_summary_changes",
                "user_id": user_id,
                "new_ids": new_ids,
                "changes": [c.model_dump(mode="json") for c in changes],
            }
        )
        fresh = list({r["id"]: r for r in table.to_pylist()}.values())  # merge keys are unique
        targets = {c.summary_id for c in changes}
        stored = self.status_rows(user_id, [c for c in changes if c.summary_id not in new_ids])
        changed = with_status([*(r for r in fresh if r["id"] in targets), *stored], changes)
        # Matched on (user_id, id): a retried change replaces the copies it wrote before.
        rows = [*fresh, *stored]
        if rows:
            data = pa.Table.from_pylist(rows, schema=S.summaries_schema(self._dim))
            self._lance.upsert(S.SUMMARIES, data, on=["user_id", "id"])

        def index() -> None:
            self._lex.upsert(summary_doc(r) for r in table.select(SUMMARY_LEX_COLS).to_pylist())
            self._lex.upsert(summary_doc(r) for r in changed)
            self._lex.commit()

        self._index(index)
        self._finish(user_id)
        log.info("store.summary_changes", user_id=user_id, new=len(new_ids), changed=len(changes))
        return changed

    def apply_status(self, user_id: str, changes: Sequence[StatusChange]) -> list[dict[str, Any]]:
        """Set status/superseded_by/reason/evidence_id/valid_to of existing summaries in one
        merge_insert (idempotent); returns the updated rows for re-indexing."""
        return self.write_status(self.status_rows(user_id, changes), changes)

    def stored_versions(self, user_id: str, expect: Sequence[SummaryRecord]) -> VersionStates:
        """The stored state of every version of the memories `expect` names."""
        found: VersionStates = {}
        for chunk in F.chunks(sorted({r.memory_id for r in expect})):
            where = F.user_ids(user_id, chunk, column="memory_id")
            for row in self._lance.rows(S.SUMMARIES, where, ["id", "status", "superseded_by"]):
                found[row["id"]] = (row["status"], row["superseded_by"])
        return found

    def status_rows(self, user_id: str, changes: Sequence[StatusChange]) -> list[dict[str, Any]]:
        """The stored rows (every column) of the summaries `changes` touch."""
        rows: list[dict[str, Any]] = []
        for chunk in F.chunks(list(dict.fromkeys(c.summary_id for c in changes))):
            rows.extend(self._lance.rows(S.SUMMARIES, F.user_ids(user_id, chunk)))
        return rows

    def restore_prior(self, user_id: str, prior: Sequence[dict[str, Any]]) -> None:
        """Put the status columns of rows back as a rolled-back commit found them."""
        if not prior:
            return
        back = [
            StatusChange(
                summary_id=p["id"],
                status=p["status"],
                superseded_by=p.get("superseded_by"),
                reason=p.get("reason"),
                evidence_id=p.get("evidence_id"),
                valid_to=p.get("valid_to"),
            )
            for p in prior
        ]
        changed = self.apply_status(user_id, back)

        def index() -> None:
            self._lex.upsert(summary_doc(r) for r in changed)
            self._lex.commit()

        self._index(index)

    def write_status(
        self, rows: list[dict[str, Any]], changes: Sequence[StatusChange]
    ) -> list[dict[str, Any]]:
        """`rows` (read by `status_rows`) with `changes` applied, written in one merge_insert."""
        if not changes:
            return []
        rows = with_status(rows, changes)
        if rows:
            data = pa.Table.from_pylist(rows, schema=S.summaries_schema(self._dim))
            # Matched on (user_id, id): ids are unique per user only, and matching on id alone
            # would overwrite another user's summary that shares the id.
            self._lance.upsert(S.SUMMARIES, data, on=["user_id", "id"])
        return rows

    def all_present(self, table: str, user_id: str, ids: Sequence[str]) -> bool:
        want = set(ids)
        found = sum(
            self._lance.count(table, F.user_ids(user_id, chunk)) for chunk in F.chunks(sorted(want))
        )
        return found == len(want)


def with_status(
    rows: list[dict[str, Any]], changes: Sequence[StatusChange]
) -> list[dict[str, Any]]:
    """`rows` (every column of each) with the status columns `changes` set, in place."""
    by_id = {c.summary_id: c for c in changes}
    now = utcnow()
    for row in rows:
        change = by_id[row["id"]]
        row.update(
            status=SummaryStatus(change.status).value,
            updated_at=now,
            superseded_by=change.superseded_by,
            reason=change.reason,
            evidence_id=change.evidence_id,
            valid_to=to_utc_or_none(change.valid_to),
        )
        if change.fact_key is not None:
            row["fact_key"] = change.fact_key
    return rows


def prior_of(row: dict[str, Any]) -> dict[str, Any]:
    """What a journal keeps of a row a commit changes: its status columns, as JSON."""
    valid_to = row.get("valid_to")
    return {
        "id": row["id"],
        "status": row["status"],
        "superseded_by": row.get("superseded_by"),
        "reason": row.get("reason"),
        "evidence_id": row.get("evidence_id"),
        "valid_to": valid_to.isoformat() if valid_to is not None else None,
    }


__all__ = [
    "WITHDRAW_OP",
    "CommitWriter",
    "check_owner",
    "check_unclaimed",
    "check_versions",
    "covering_segments",
    "prior_of",
    "version_states",
    "with_status",
]
