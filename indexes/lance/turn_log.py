"""The `turns` table: hymem's write-ahead log of accepted messages.

A turn is written (status `pending`) before any model runs, and marked `stored` with its
segment once a commit covers it. Callers (the `Store`) check that the store is open and
writable and hold its write lock; this class only knows the table.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pyarrow as pa
from hymem.core.types import TurnRecord, TurnStatus
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.tables import LanceTables


class TurnLog:
    def __init__(self, lance: LanceTables) -> None:
        self._lance = lance

    def get(
        self, user_id: str, *, ids: Sequence[str] | None = None, status: TurnStatus | None = None
    ) -> list[TurnRecord]:
        """Turns ordered by (seq, id)."""
        where = F.conjunction(
            [
                F.eq("user_id", user_id),
                F.in_list("id", ids) if ids is not None else None,
                F.eq("status", TurnStatus(status).value) if status is not None else None,
            ]
        )
        rows = self._lance.rows(S.TURNS, where)
        rows.sort(key=lambda r: (r["seq"], r["id"]))
        return S.rows_to_records(TurnRecord, rows)

    def next_seq(self, user_id: str) -> int:
        seqs = self._lance.query(S.TURNS, F.eq("user_id", user_id), ["seq"]).column("seq")
        return (max(seqs.to_pylist()) + 1) if len(seqs) else 0

    def append(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[TurnRecord]:
        """Insert turns whose (user_id, id) is new, in one LanceDB add; returns those. Ids in
        `fresh_ids` are known unused and not looked up."""
        new = self.new_of(turns, fresh_ids=fresh_ids)
        self.add(new)
        return new

    def new_of(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[TurnRecord]:
        """The turns whose (user_id, id) the log does not hold yet (first of each)."""
        fresh: dict[tuple[str, str], TurnRecord] = {}
        for t in turns:
            fresh.setdefault((t.user_id, t.id), t)
        known_new = set(fresh_ids)
        by_user: dict[str, list[str]] = {}
        for user, id_ in fresh:
            if id_ not in known_new:
                by_user.setdefault(user, []).append(id_)
        for user, ids in by_user.items():
            for chunk in F.chunks(ids):
                for row in self._lance.rows(S.TURNS, F.user_ids(user, chunk), ["id"]):
                    fresh.pop((user, row["id"]), None)
        return list(fresh.values())

    def add(self, new: Sequence[TurnRecord]) -> None:
        """Insert these turns (known new) in one LanceDB add."""
        self._lance.add(S.TURNS, S.turns_to_arrow(list(new)))

    def count_present(self, turns: Sequence[TurnRecord]) -> int:
        """How many of these turns the log holds, read at the table's newest version."""
        by_user: dict[str, list[str]] = {}
        for t in turns:
            by_user.setdefault(t.user_id, []).append(t.id)
        found = 0
        for user, ids in by_user.items():
            for chunk in F.chunks(sorted(set(ids))):
                found += self._lance.count(S.TURNS, F.user_ids(user, chunk))
        return found

    def set_status(self, user_id: str, seg_of: dict[str, str | None], status: TurnStatus) -> None:
        """Set status of existing turns (and segment_id: `seg_of[id]` when stored, None when
        pending) in one partial merge_insert; ids the log does not hold are skipped. Only the
        two columns are written: reading the whole rows first cost a query per commit."""
        if not seg_of:
            return
        ids = list(seg_of)
        segs = [seg_of[i] if status is TurnStatus.STORED else None for i in ids]
        data = pa.table(
            {
                "user_id": pa.array([user_id] * len(ids), pa.string()),
                "id": pa.array(ids, pa.string()),
                "status": pa.array([status.value] * len(ids), pa.string()),
                "segment_id": pa.array(segs, pa.string()),
            }
        )
        self._lance.update_matched(S.TURNS, data, on=["user_id", "id"])

    def owners(self, user_id: str, ids: Sequence[str]) -> dict[str, str]:
        """Each of these turns that is stored -> the segment holding it."""
        found: dict[str, str] = {}
        for chunk in F.chunks(sorted(set(ids))):
            where = F.conjunction(
                [F.user_ids(user_id, chunk), F.eq("status", TurnStatus.STORED.value)]
            )
            for r in self._lance.rows(S.TURNS, where, ["id", "segment_id"]):
                if r["segment_id"] is not None:
                    found[r["id"]] = r["segment_id"]
        return found

    def delete(self, user_id: str, ids: Sequence[str]) -> int:
        """Delete these turns of the user; returns how many were there."""
        gone = 0
        for chunk in F.chunks(sorted(set(ids))):
            where = F.user_ids(user_id, chunk)
            n = self._lance.count(S.TURNS, where)
            if n:
                self._lance.delete(S.TURNS, where)
                gone += n
        return gone


__all__ = ["TurnLog"]
