"""Keyset paging over one user's records: the order, the key of a record, and the SQL clause
that starts a page after a key.

Pages are cut by key, not by offset, so a page costs what it returns (plus a scan of the key
columns), and records written between two pages never shift or repeat the ones already seen.
Turns are ordered by their sequence number, segments and summaries by (created_at, id).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from hymem.core.time import to_utc
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.protocol import PageKey

TABLE_OF = {"turn": S.TURNS, "segment": S.SEGMENTS, "summary": S.SUMMARIES}
ORDER_COLUMN = {"turn": "seq", "segment": "created_at", "summary": "created_at"}
# The most records one page may hold, whatever a direct caller of the store asks.
MAX_PAGE = 1_000
# The most keys a store reads for one page: a full page plus the one record that tells the
# caller another page follows (without it, a page of exactly MAX_PAGE would end the listing).
MAX_FETCH = MAX_PAGE + 1
# A turn's seq is an int64 in LanceDB; a page key outside it is no key hymem made.
MAX_SEQ = 2**63 - 1


def key_of(level: str, row: Mapping[str, Any]) -> PageKey:
    """The paging key of a row or record dump."""
    value = row[ORDER_COLUMN[level]]
    if isinstance(value, datetime):
        value = to_utc(value)
    return (value, row["id"])


def after_clause(level: str, after: PageKey | None) -> str | None:
    """Rows strictly after `after` in the level's order (None: from the start)."""
    if after is None:
        return None
    value, id_ = after
    col = ORDER_COLUMN[level]
    if level == "turn":
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError("a turn page key starts with its seq")
        if not -MAX_SEQ - 1 <= value <= MAX_SEQ:
            raise ValueError("a turn page key's seq is an int64")
        bound = str(int(value))
    else:
        if not isinstance(value, datetime):
            raise TypeError("a segment or summary page key starts with its created_at")
        bound = F.ts_literal(value)
    return f"{col} > {bound} OR ({col} = {bound} AND id > {F.sql_literal(id_)})"


def first(keys: Iterable[PageKey], limit: int) -> list[PageKey]:
    """The `limit` smallest keys (at most MAX_FETCH), in order."""
    return sorted(keys)[: max(0, min(limit, MAX_FETCH))]


__all__ = [
    "MAX_FETCH",
    "MAX_PAGE",
    "MAX_SEQ",
    "ORDER_COLUMN",
    "TABLE_OF",
    "PageKey",
    "after_clause",
    "first",
    "key_of",
]
