"""One version per memory in a search's results (pure: the store is reached only through the
`reread` function a caller passes).

A search reads the store more than once: the lexical branch looks its ids up in a worker thread
while the dense branch scans, and the light path reads rows for further ids as it needs them. A
correction (update, delete, restore) that commits between two such reads moves which version of
its memory is active, so one read can hold the old version active and the other the new one.
Each read alone is a snapshot in which a memory has at most one active version (a version
change is one commit), so when two candidates share a memory, all such candidates are read again
in one read, and only what that newest read admits is kept: the version active now, whether it
is the newest (update) or an older one made active again (restore). A memory is then served
once, at its best-ranked version (what a store that holds two active versions, written before
versions were kept to one, gets too).

A search for inactive versions too (`include_inactive`) or as of a past moment (`as_of`) asks
for several versions of one memory, and is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from hymem.core.logging import get_logger
from hymem.core.types import Level
from hymem.indexes.protocol import Row, RowScope

# Reads `ids` again in one read and returns the rows of those the scope still admits.
Reread = Callable[[Sequence[str]], Mapping[str, Row]]

log = get_logger("hymem.search.versions")


def keeps_one_version(scope: RowScope) -> bool:
    """Whether a search of `scope` serves each memory once: current summaries only."""
    return scope.level is Level.SUMMARY and scope.statuses is not None and scope.valid_at is None


def memory_of(item: str, row: Row) -> str:
    """The memory a version belongs to (a row with none is a memory of its own)."""
    memory = row.get("memory_id")
    return memory if isinstance(memory, str) and memory else item


def shared_memories(ids: Iterable[str], rows: Mapping[str, Row]) -> list[str]:
    """The ids, in the order given, whose memory another of them (with a row) shares."""
    by_memory: dict[str, list[str]] = {}
    for item in dict.fromkeys(ids):
        row = rows.get(item)
        if row is not None:
            by_memory.setdefault(memory_of(item, row), []).append(item)
    return [item for group in by_memory.values() if len(group) > 1 for item in group]


def first_version_each(
    ranking: Sequence[tuple[str, float]], rows: Mapping[str, Row]
) -> list[tuple[str, float]]:
    """`ranking` with each memory at its best-ranked version only. An id with no row passes:
    whether it is served is its caller's to decide (a lexical orphan is logged and dropped)."""
    seen: set[str] = set()
    out: list[tuple[str, float]] = []
    for item, score in ranking:
        row = rows.get(item)
        if row is not None:
            memory = memory_of(item, row)
            if memory in seen:
                continue
            seen.add(memory)
        out.append((item, score))
    return out


def one_version_each(
    scope: RowScope,
    ranking: Sequence[tuple[str, float]],
    rows: Mapping[str, Row],
    reread: Reread,
) -> tuple[list[tuple[str, float]], dict[str, Row]]:
    """`ranking` (ids best first) and its `rows` with each memory once (module docstring): the
    ids that share a memory are read again together (`reread`, one read, only when there are
    any), those it no longer admits are dropped and the others take its rows, then each memory
    keeps its best-ranked version. Returns the ranking and the rows to build hits from."""
    fresh = dict(rows)
    if not keeps_one_version(scope):
        return list(ranking), fresh
    shared = shared_memories([item for item, _ in ranking], rows)
    if shared:
        again = reread(shared)
        for item in shared:
            row = again.get(item)
            if row is None:
                del fresh[item]
            else:
                fresh[item] = row
        dropped = [item for item in shared if item not in fresh]
        log.info("search.versions_reread", user_id=scope.user_id, ids=shared, dropped=dropped)
    kept = [(item, score) for item, score in ranking if item in fresh or item not in rows]
    return first_version_each(kept, fresh), fresh


__all__ = [
    "Reread",
    "first_version_each",
    "keeps_one_version",
    "memory_of",
    "one_version_each",
    "shared_memories",
]
