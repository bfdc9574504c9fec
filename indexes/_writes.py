"""The store's write path (mixed into `Store`): turns, the atomic segment commit and
sleep-time status changes. Each multi-table write is journaled first (see `recovery.py`), then
goes LanceDB (each add/delete/merge_insert is one atomic LanceDB commit), then Tantivy, then
turn status, then the lexical sync record; the journal is removed last.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa
from hymem.errors import UserInputError
from hymem.indexes import filters as F
from hymem.indexes import schema as S
from hymem.indexes.recovery import (
    LEX_COLS,
    RecoveryMixin,
    chunks,
    segment_doc,
    summary_doc,
)
from hymem.logging import get_logger
from hymem.types import (
    Level,
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
    TurnStatus,
)

log = get_logger("hymem.indexes.store")


class WriteMixin(RecoveryMixin):
    dim: int

    # --- turns ---------------------------------------------------------------------------
    def append_turns(self, turns: Sequence[TurnRecord]) -> list[str]:
        """Insert turns whose (user_id, id) is new (idempotent); returns ids actually inserted."""
        self._check_writable()
        fresh: dict[tuple[str, str], TurnRecord] = {}
        for t in turns:
            fresh.setdefault((t.user_id, t.id), t)
        if not fresh:
            return []
        with self._write_lock:
            by_user: dict[str, list[str]] = {}
            for user, id_ in fresh:
                by_user.setdefault(user, []).append(id_)
            for user, ids in by_user.items():
                for chunk in chunks(ids):
                    where = F.conjunction([F.eq("user_id", user), F.in_list("id", chunk)])
                    for row in self._lance.rows(S.TURNS, where, ["id"]):
                        fresh.pop((user, row["id"]), None)
            new = list(fresh.values())
            self._lance.add(S.TURNS, S.turns_to_arrow(new))
            self._note_write()
        return [t.id for t in new]

    def _set_turns(self, user_id: str, seg_of: dict[str, str | None], status: TurnStatus) -> None:
        """Set status (and segment_id) of existing turns in one merge_insert."""
        rows: list[dict[str, Any]] = []
        for chunk in chunks(list(seg_of)):
            where = F.conjunction([F.eq("user_id", user_id), F.in_list("id", chunk)])
            rows.extend(self._lance.rows(S.TURNS, where))
        for row in rows:
            row["status"] = status.value
            row["segment_id"] = seg_of[row["id"]] if status is TurnStatus.STORED else None
        if rows:
            data = pa.Table.from_pylist(rows, schema=S.turns_schema())
            self._lance.upsert(S.TURNS, data, on=["user_id", "id"])

    # --- atomic commit of the write path -------------------------------------------------
    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
    ) -> None:
        """Write segments + summaries (vectors set), index them, then mark turns stored with
        their segment_id. Re-committing the same segment ids replaces those segments and every
        summary linked to them, so a re-flush after a crash never duplicates anything."""
        self._check_writable()
        for rec in [*segments, *summaries]:
            if rec.user_id != user_id:
                raise UserInputError(f"{type(rec).__name__} {rec.id!r} belongs to another user")
        seg_table = S.segments_to_arrow(segments, self.dim)  # validates vectors up front
        sum_table = S.summaries_to_arrow(summaries, self.dim)
        seg_ids = [s.id for s in segments]
        sum_ids = [s.id for s in summaries]
        seg_of: dict[str, str | None] = dict.fromkeys(stored_turn_ids)
        for seg in segments:
            for tid in seg.turn_ids:
                if tid in seg_of and seg_of[tid] is None:
                    seg_of[tid] = seg.id
        with self._write_lock:
            self._journal(
                {
                    "op": "commit_segments",
                    "user_id": user_id,
                    "segment_ids": seg_ids,
                    "summary_ids": sum_ids,
                    "turns": seg_of,
                }
            )
            stale = self._replace_rows(user_id, seg_ids, sum_ids)
            self._lance.add(S.SEGMENTS, seg_table)
            self._lance.add(S.SUMMARIES, sum_table)
            self._lex.delete(Level.SUMMARY, stale - set(sum_ids))
            self._lex.upsert(segment_doc(r) for r in seg_table.select(LEX_COLS).to_pylist())
            self._lex.upsert(
                summary_doc(r) for r in sum_table.select([*LEX_COLS, "status"]).to_pylist()
            )
            self._lex.commit()
            if seg_of:
                self._set_turns(user_id, seg_of, TurnStatus.STORED)
            self._finish_write()
        log.info(
            "store.commit",
            user_id=user_id,
            segments=len(seg_ids),
            summaries=len(sum_ids),
            turns=len(seg_of),
        )

    def _replace_rows(
        self, user_id: str, seg_ids: Sequence[str], sum_ids: Sequence[str]
    ) -> set[str]:
        """Delete earlier copies of these segments and every summary linked to them; returns
        the deleted summary ids (so the lexical index drops them too)."""
        user = F.eq("user_id", user_id)
        stale: set[str] = set()
        for chunk in chunks(seg_ids):
            where = F.conjunction([user, F.in_list("id", chunk)])
            if self._lance.count(S.SEGMENTS, where):
                self._lance.delete(S.SEGMENTS, where)
            where = F.conjunction([user, F.in_list("segment_id", chunk)])
            stale.update(r["id"] for r in self._lance.rows(S.SUMMARIES, where, ["id"]))
        for chunk in chunks(sum_ids):
            where = F.conjunction([user, F.in_list("id", chunk)])
            stale.update(r["id"] for r in self._lance.rows(S.SUMMARIES, where, ["id"]))
        for chunk in chunks(sorted(stale)):
            self._lance.delete(S.SUMMARIES, F.conjunction([user, F.in_list("id", chunk)]))
        return stale

    # --- sleep-time versioning -----------------------------------------------------------
    def apply_summary_changes(
        self, user_id: str, new: Sequence[SummaryRecord], changes: Sequence[StatusChange]
    ) -> None:
        """Insert new versions, then update status/superseded_by/reason of old ones, then
        re-index. Readers see old or new, never neither (insert new before retiring old)."""
        self._check_writable()
        for rec in new:
            if rec.user_id != user_id:
                raise UserInputError(f"SummaryRecord {rec.id!r} belongs to another user")
        table = S.summaries_to_arrow(new, self.dim)
        new_ids = [s.id for s in new]
        with self._write_lock:
            self._journal(
                {
                    "op": "apply_summary_changes",
                    "user_id": user_id,
                    "new_ids": new_ids,
                    "changes": [c.model_dump(mode="json") for c in changes],
                }
            )
            for chunk in chunks(new_ids):
                self._lance.delete(
                    S.SUMMARIES, F.conjunction([F.eq("user_id", user_id), F.in_list("id", chunk)])
                )
            self._lance.add(S.SUMMARIES, table)
            changed = self._apply_status(user_id, changes)
            self._lex.upsert(
                summary_doc(r) for r in table.select([*LEX_COLS, "status"]).to_pylist()
            )
            self._lex.upsert(summary_doc(r) for r in changed)
            self._lex.commit()
            self._finish_write()
        log.info("store.summary_changes", user_id=user_id, new=len(new_ids), changed=len(changes))

    def _apply_status(self, user_id: str, changes: Sequence[StatusChange]) -> list[dict[str, Any]]:
        if not changes:
            return []
        by_id = {c.summary_id: c for c in changes}
        rows: list[dict[str, Any]] = []
        for chunk in chunks(list(by_id)):
            where = F.conjunction([F.eq("user_id", user_id), F.in_list("id", chunk)])
            rows.extend(self._lance.rows(S.SUMMARIES, where))
        now = datetime.now()
        for row in rows:
            change = by_id[row["id"]]
            row.update(
                status=SummaryStatus(change.status).value,
                updated_at=now,
                superseded_by=change.superseded_by,
                reason=change.reason,
                evidence_id=change.evidence_id,
            )
        if rows:
            data = pa.Table.from_pylist(rows, schema=S.summaries_schema(self.dim))
            self._lance.upsert(S.SUMMARIES, data, on=["id"])
        return rows
