"""The storage ports: everything hymem's engine asks of a memory store, one small Protocol per
concern. A component is typed with the ports it uses and nothing else:

    Turns          get_turns, next_seq, append_turns                      (turns.py)
    Records        users, get_segments, get_summaries, iter_summaries,     (records.py)
                   page
    DenseSearch    dense_rows, dense_search, dense_search_many, hydrate    (search.py)
    LexicalSearch  lexical_unavailable, lexical_search, reindex            (search.py)
    Commits        read_only, writing, commit_segments,                    (commits.py)
                   apply_summary_changes, withdraw, erase_user
    TraceLog       read_only, write_trace, read_traces                     (logs.py)
    SleepLog       sleep_log -> LineLog                                    (logs.py)
    Admin          path, read_only, meta, counts, optimize,                (admin.py)
                   catch_up, replica_lag_s, close

e.g. the searcher takes `DenseSearch` and `LexicalSearch`, the write-path guard `Commits`.
`Storage` is their sum: what `hymem.indexes.open` returns and the facade splits among its
components. Every store kind (a folder, an object store, a sharded object store, the in-memory
twin) serves every port; `tests/conformance` runs one behavioural suite per port concern
against each kind, so a component tested against the in-memory store behaves the same on disk.

Promises that hold for every port method:

* Isolation. Every per-user read and write matches `user_id` exactly; a hostile id such as
  `x' OR '1'='1` is a literal that matches only itself. Record ids are unique per user, not
  globally: two users may hold the same id without touching each other.
* Time. Every stored and compared instant is naive UTC (`hymem.core.time`): aware datetimes are
  converted, naive ones are taken as UTC. A `time_range` (since, until) keeps records whose
  [time_start, time_end] overlaps it, either bound may be None, a record with one bound is an
  instant, and an undated record never matches a bounded range.
* Statuses. `statuses` filters Level-1 summaries only (segments have none); None means every
  status; the default is active summaries only.
* Metadata. `filters` (a parsed `hymem.core.filters.Filter`) keeps the records whose
  metadata it matches, with `Filter.matches`'s semantics, inside the index before the top-k
  cut; None keeps all. A segment's metadata is its turns', a summary's its segment's.
* Lifecycle. Writes on a read-only store raise `ReadOnlyStoreError`; any call after `close()`
  raises `StoreClosedError` (close itself may be called twice).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from hymem.indexes.ports.admin import Admin
from hymem.indexes.ports.commits import Commits
from hymem.indexes.ports.logs import LineLog, SleepLog, TraceLog
from hymem.indexes.ports.records import Records
from hymem.indexes.ports.search import DenseSearch, LexicalSearch
from hymem.indexes.ports.turns import Turns

PORTS: tuple[type, ...] = (
    Turns,
    Records,
    DenseSearch,
    LexicalSearch,
    Commits,
    TraceLog,
    SleepLog,
    Admin,
)


def members(*ports: type) -> frozenset[str]:
    """The public members (methods and properties) the given ports declare, e.g. what a
    generic wrapper of a port (a router, a guard) must serve."""
    return frozenset(n for port in ports for n in vars(port) if not n.startswith("_"))


@runtime_checkable
class Storage(
    Turns, Records, DenseSearch, LexicalSearch, Commits, TraceLog, SleepLog, Admin, Protocol
):
    """One whole memory store: every port. Safe for concurrent readers; one writer."""


__all__ = [
    "PORTS",
    "Admin",
    "Commits",
    "DenseSearch",
    "LexicalSearch",
    "LineLog",
    "Records",
    "SleepLog",
    "Storage",
    "TraceLog",
    "Turns",
    "members",
]
