"""Which part serves each plain port member of the `Store`, and under which guard.

Most of what the `Store` serves is one part's method behind the same few checks, so those
members are not written out: `GUARDS` says, per member, the part, the guard and what a storage
fault reports the call was doing, and `Store.__getattr__` builds each member once from it. A new
argument of such a method (a metadata filter for `get_summaries`) then touches its port, the
part and the in-memory twin, never the `Store`. The guards:

    READ    the store is open
    SEARCH  open, and within the staleness bound of other writers' commits (`maybe_catch_up`)
    SCAN    open; a lazy scan, its faults translated while it is consumed
    WRITE   open and writable, under the write lock

Faults are translated by `faults.storage_faults` with the member's `action`; `{name}` in it is
the call's argument of that name ("listing {level}s"); None leaves them as raised.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class Kind(Enum):
    READ = "read"
    SEARCH = "search"
    SCAN = "scan"
    WRITE = "write"


class Guard(NamedTuple):
    part: str  # the `Store` attribute holding the part
    kind: Kind
    action: str | None  # what a fault says the call was doing; None: not translated
    method: str | None = None  # the part's name for the member, when it is not the port's


READ, SEARCH, SCAN, WRITE = Kind.READ, Kind.SEARCH, Kind.SCAN, Kind.WRITE

GUARDS: dict[str, Guard] = {
    # Turns
    "get_turns": Guard("_turns", READ, "reading turns", "get"),
    "next_seq": Guard("_turns", READ, "reading turns"),
    # Records
    "users": Guard("_records", READ, "listing users"),
    "get_segments": Guard("_records", READ, "reading segments"),
    "get_summaries": Guard("_records", READ, "reading summaries"),
    "iter_summaries": Guard("_records", SCAN, "reading summaries"),
    "page": Guard("_records", READ, "listing {level}s"),
    # DenseSearch
    "dense_rows": Guard("_records", SEARCH, "a dense search"),
    "dense_search": Guard("_records", SEARCH, "a dense search"),
    "dense_search_many": Guard("_records", SEARCH, "a dense search"),
    "hydrate": Guard("_records", READ, "reading hits"),
    # LexicalSearch: a lexical search never raises (the port's promise)
    "lexical_search": Guard("_records", SEARCH, None),
    # TraceLog
    "write_trace": Guard("_traces", WRITE, "writing a trace", "write"),
    "read_traces": Guard("_traces", READ, "reading traces", "read"),
    # Admin
    "counts": Guard("_records", READ, "counting rows"),
    "catch_up": Guard("_sync", READ, None),
}

__all__ = ["GUARDS", "Guard", "Kind"]
