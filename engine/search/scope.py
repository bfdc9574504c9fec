"""What one search is about, checked once at the edge into a typed `SearchScope`.

Every public search -- `Memory.search` and `AsyncMemory.search`, the REST server's `/v1/search`
and the MCP server's `search_memory` (both call `Memory.search`), and `HybridSearcher.search`
for callers that hold a searcher -- turns its raw arguments into a `SearchScope` with
`search_scope`, the one function that checks them (a typed `UserInputError` naming the
argument). The layers below (`HybridSearcher.find`, the reader's `Run`, the store's `RowScope`)
take the scope as given and never check it again; `hymem.read.params` does the same for an ask,
whose searches share one scope. httpx turns `timeout=5` into a `Timeout` the same way.

Normalised on the way in: bounds are naive UTC (`hymem.core.time.parse_time`, the one rule for
every time argument: the same forms as `add(timestamp=)`), `as_of` is folded into `until`
(nothing after the moment a question is asked is retrieved) and kept as the moment whose facts
are asked about (a fact superseded later was still true then: `RowScope.valid_at`), and
`filters` with the `agent_id` / `run_id` shortcuts is one parsed `Filter`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from hymem.core.errors import UserInputError
from hymem.core.filters import Filter, scoped
from hymem.core.time import parse_time
from hymem.core.types import Level
from hymem.core.validation import (
    MAX_K,
    MAX_QUERY_CHARS,
    check_k,
    check_level,
    check_query,
    check_user_id,
)
from hymem.indexes.protocol import ACTIVE_ONLY, RowScope, TimeRange

SearchMode = Literal["hybrid", "dense", "lexical"]
MODES: tuple[SearchMode, ...] = ("hybrid", "dense", "lexical")


@dataclass(frozen=True, slots=True)
class SearchScope:
    """One checked search: whose records, how many, at which level, by which signals, within
    which time bounds (naive UTC; `as_of` already folded into `until`), of which statuses and
    matching which metadata `Filter`. Build it with `search_scope`; `sized` derives the scope of
    another search of the same ask (another k or level)."""

    user_id: str
    k: int = 10
    level: Level = Level.SUMMARY
    mode: SearchMode = "hybrid"
    since: datetime | None = None
    until: datetime | None = None
    include_inactive: bool = False
    filters: Filter | None = None
    # The moment asked about (naive UTC): facts superseded after it still match (they were
    # true then); None: current facts only.
    as_of: datetime | None = None

    @property
    def time_range(self) -> TimeRange | None:
        """(since, until), or None when neither bound is set."""
        return None if self.since is None and self.until is None else (self.since, self.until)

    def rows(self) -> RowScope:
        """The rows each branch may return, as the store's search primitives take them."""
        return RowScope(
            self.user_id,
            level=self.level,
            statuses=None if self.include_inactive else ACTIVE_ONLY,
            time_range=self.time_range,
            filters=self.filters,
            valid_at=self.as_of,
        )

    def sized(self, k: int, level: Level | None = None) -> SearchScope:
        """The same scope for `k` hits (at `level`, when given): a k the caller computed from
        checked sizes, such as the reader's deeper candidate pool."""
        return replace(self, k=k, level=self.level if level is None else level)


def search_scope(
    query: object,
    *,
    user_id: object,
    k: object = 10,
    level: object = Level.SUMMARY,
    mode: object = "hybrid",
    since: object = None,
    until: object = None,
    include_inactive: object = False,
    as_of: object = None,
    filters: Mapping[str, Any] | Filter | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    max_k: int = MAX_K,
    max_query_chars: int = MAX_QUERY_CHARS,
) -> SearchScope:
    """The scope of one search call, every argument checked (UserInputError otherwise). The
    query is checked here too, as every search carries one; the scope does not hold it,
    because one ask searches several queries in the same scope."""
    check_query(query, max_chars=max_query_chars)
    low, high = time_bounds(since, until, as_of)
    return SearchScope(
        user_id=check_user_id(user_id),
        k=check_k(k, maximum=max_k),
        level=check_level(level),
        mode=check_mode(mode),
        since=low,
        until=high,
        include_inactive=bool(include_inactive),
        filters=scoped(filters, agent_id=agent_id, run_id=run_id),
        as_of=as_of_utc(as_of),
    )


def check_mode(mode: object) -> SearchMode:
    if mode not in MODES:
        raise UserInputError(f"unknown search mode {mode!r}: use hybrid, dense or lexical")
    return mode


def as_of_utc(value: object) -> datetime | None:
    """The moment a question is asked: any timestamp hymem accepts, as naive UTC."""
    return None if value is None else parse_time(value, "as_of")


def time_bounds(
    since: object, until: object, as_of: object = None
) -> tuple[datetime | None, datetime | None]:
    """(since, until) as naive UTC, `until` lowered to `as_of` when that is earlier. The bounds
    are compared in UTC, so one aware and one naive bound are fine rather than a TypeError."""
    low = None if since is None else parse_time(since, "since")
    high = None if until is None else parse_time(until, "until")
    moment = as_of_utc(as_of)
    if moment is not None:
        high = moment if high is None else min(high, moment)
    if low is not None and high is not None and low > high:
        raise UserInputError("the time range starts after it ends (since > until, or as_of)")
    return low, high


__all__ = [
    "MODES",
    "SearchMode",
    "SearchScope",
    "as_of_utc",
    "check_mode",
    "search_scope",
    "time_bounds",
]
