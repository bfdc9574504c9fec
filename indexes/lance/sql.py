"""SQL filter fragments for LanceDB, built only from escaped literals.

Every user-supplied value (user ids, record ids, statuses) reaches a `where` clause through
`sql_literal`, the one escaping function, so `x' OR '1'='1` stays a string literal. Every time
bound goes through `hymem.core.time.to_utc` first: columns hold naive UTC, so an aware bound is
converted and a naive one is taken as UTC, whatever the SQL engine would assume.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from hymem.core.errors import UserInputError
from hymem.core.time import to_utc

# Ids per `IN (...)` clause. DataFusion's planning time grows with the list, and a 500-id clause
# stays a few kB of SQL; commits and lookups of more ids run one query per chunk.
ID_CHUNK = 500


def sql_literal(value: str) -> str:
    """A single-quoted SQL string literal (single quotes doubled; NUL rejected)."""
    if not isinstance(value, str):
        raise UserInputError(f"expected a string filter value, got {type(value).__name__}")
    if "\x00" in value:
        raise UserInputError("filter values must not contain NUL characters")
    return "'" + value.replace("'", "''") + "'"


def ts_literal(value: datetime) -> str:
    """A naive-UTC timestamp literal LanceDB's SQL (DataFusion) compares with timestamp columns."""
    if not isinstance(value, datetime):
        raise UserInputError(f"expected a datetime, got {type(value).__name__}")
    return f"CAST({sql_literal(to_utc(value).isoformat(sep='T'))} AS TIMESTAMP)"


def eq(column: str, value: str) -> str:
    return f"{column} = {sql_literal(value)}"


def in_list(column: str, values: Iterable[str]) -> str:
    """`column IN (...)`; an empty list yields an always-false clause rather than bad SQL."""
    items = [sql_literal(v) for v in dict.fromkeys(values)]
    if not items:
        return "false"
    return f"{column} IN ({', '.join(items)})"


def user_ids(user_id: str, ids: Iterable[str], column: str = "id") -> str:
    """Rows of one user whose `column` is one of `ids`."""
    return conjunction([eq("user_id", user_id), in_list(column, ids)])


def chunks(ids: Iterable[str], size: int = ID_CHUNK) -> Iterator[list[str]]:
    """`ids` without repeats, in first-seen order, in lists of at most `size`."""
    unique = list(dict.fromkeys(ids))
    for i in range(0, len(unique), size):
        yield unique[i : i + size]


def time_overlap(since: datetime | None, until: datetime | None) -> str | None:
    """Records whose [time_start, time_end] overlaps [since, until]; undated records never match
    a bounded range. A record with only one bound set is treated as an instant."""
    clauses: list[str] = []
    if since is not None:
        clauses.append(f"coalesce(time_end, time_start) >= {ts_literal(since)}")
    if until is not None:
        clauses.append(f"coalesce(time_start, time_end) <= {ts_literal(until)}")
    return " AND ".join(clauses) if clauses else None


def conjunction(clauses: Sequence[str | None]) -> str:
    parts = [f"({c})" for c in clauses if c]
    return " AND ".join(parts) if parts else "true"


__all__ = [
    "ID_CHUNK",
    "chunks",
    "conjunction",
    "eq",
    "in_list",
    "sql_literal",
    "time_overlap",
    "ts_literal",
    "user_ids",
]
