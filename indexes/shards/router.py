"""A sharded store: N complete stores behind every port, each user's calls sent to its shard.

One generic router serves every port: a call about one user (`user_of`: its user id, a
search's `RowScope`, a trace) goes unchanged to exactly one shard (`placement.shard_of`), so
everything a store guarantees for a user (journaled commits, leases, erasure, replicas,
validity, filters) holds unchanged: it is that shard's own code doing it. Only the calls that
split or merge are written out: about every user (`users`, `counts()`, `iter_summaries()`,
`read_traces()`, maintenance, catch-up), asked of every shard, in parallel where each answer
is a round trip, and merged in the order the port promises; and `append_turns`, split by user.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, TypeVar

from hymem.core.errors import StoreClosedError
from hymem.core.types import (
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
)
from hymem.indexes.ports import PORTS, LineLog, Storage, members
from hymem.indexes.protocol import (
    ACTIVE_ONLY,
    SCAN_BATCH_ROWS,
    RowScope,
)
from hymem.indexes.shards.placement import shard_of

T = TypeVar("T")


def summed(parts: Sequence[dict[str, int]]) -> dict[str, int]:
    """Per-key totals of the shards' counts."""
    total: dict[str, int] = {}
    for part in parts:
        for key, n in part.items():
            total[key] = total.get(key, 0) + n
    return total


def user_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, bool]:
    """The user a per-user port call is about, and whether it is a search: the call's first
    argument, which is the user id, a search's `RowScope`, or a trace (its `user_id`)."""
    first = args[0] if args else kwargs.get("user_id", kwargs.get("scope", kwargs.get("trace")))
    if isinstance(first, RowScope):
        return first.user_id, True
    if isinstance(first, dict):
        return str(first.get("user_id", "")), False
    return str(first), False


class ShardedLines:
    """The shards' sleep journals as one `LineLog`: a user's lines live in the user's shard."""

    def __init__(self, logs: Sequence[LineLog], count: int) -> None:
        self._logs = logs
        self._count = count

    def _of(self, user_id: str) -> LineLog:
        return self._logs[shard_of(user_id, self._count)]

    def lines(self, user_id: str | None = None) -> list[str]:
        if user_id is not None:
            return self._of(user_id).lines(user_id)
        return [line for log in self._logs for line in log.lines()]

    def append(self, rows: Sequence[tuple[str, str]]) -> None:
        by_shard: dict[int, list[tuple[str, str]]] = {}
        for row in rows:
            by_shard.setdefault(shard_of(row[0], self._count), []).append(row)
        for shard, part in by_shard.items():
            self._logs[shard].append(part)

    def delete_user(self, user_id: str) -> None:
        self._of(user_id).delete_user(user_id)

    def close(self) -> None:
        for log in self._logs:
            log.close()


class ShardedStore:
    """`Storage` over `shards`, opened by `hymem.indexes.open` from a store's shard manifest."""

    def __init__(
        self,
        root: str,
        shards: Sequence[Storage],
        *,
        read_only: bool,
        refresh_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`refresh_s`: the shards' staleness bound (an object store's), kept by catching
        the shards this process searches up at once when it runs out (`_refresh`); None: the
        shards keep it alone."""
        self._root = root
        self._shards = list(shards)
        self._read_only = read_only
        self._pool = ThreadPoolExecutor(
            min(len(self._shards), 16), thread_name_prefix="hymem-shard"
        )
        self._refresh_s, self._clock = refresh_s, clock
        self._refreshed = clock()
        self._refreshing = threading.Lock()
        # shards this process has searched (the wave's): a flag per shard, so a search setting
        # one never changes the size of what a running wave reads
        self._searched = [False] * len(self._shards)
        self._sleep_log = ShardedLines([s.sleep_log() for s in self._shards], len(self._shards))
        self._closed = False

    @property
    def shard_count(self) -> int:
        return len(self._shards)

    def shard(self, user_id: str) -> Storage:
        """The store holding `user_id`."""
        return self._shards[shard_of(user_id, len(self._shards))]

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"the store at {self._root} is closed")

    def _refresh(self, user_id: str) -> None:
        """Before a search of `user_id`: once the staleness bound has run out, catch up, in one
        parallel wave, every shard this process has searched. Each shard would otherwise catch
        itself up on its next search: with searches spread over S shards that is S catch-ups,
        one in a search's path each time, where the wave costs one catch-up's latency per
        `refresh_s` (measured: search p50 162-756 ms without it at 2-8 workers and 16
        shards). Only searched shards: a worker whose searches are its
        write path's (the consolidation's neighbours of its own users) caught up every shard of
        the store before, and with 64 shards those reads doubled the requests per add. A shard
        searched for the first time catches itself up. A search that finds a wave running goes
        on without waiting, as one shard's does."""
        self._searched[shard_of(user_id, len(self._shards))] = True
        if self._refresh_s is None or self._clock() - self._refreshed < self._refresh_s:
            return
        if not self._refreshing.acquire(blocking=False):
            return
        try:
            wave = [shard for shard, hit in zip(self._shards, self._searched, strict=True) if hit]
            self._each(lambda s: s.catch_up(), wave)
            self._refreshed = self._clock()
        finally:
            self._refreshing.release()

    def _each(
        self, call: Callable[[Storage], T], shards: Sequence[Storage] | None = None
    ) -> list[T]:
        """`call` on every shard (or on `shards`) at once (each is a round trip on an object
        store)."""
        self._check_open()
        return list(self._pool.map(call, self._shards if shards is None else shards))

    # --- lifecycle -----------------------------------------------------------------------
    @property
    def path(self) -> str:
        return self._root

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def lexical_unavailable(self) -> bool:
        return any(s.lexical_unavailable for s in self._shards)

    def meta(self) -> dict[str, Any]:
        return {**self._shards[0].meta(), "shards": len(self._shards)}

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        errors: list[BaseException] = []
        for store in self._shards:
            try:
                store.close()
            except Exception as exc:  # close every shard, then report the first failure
                errors.append(exc)
        self._pool.shutdown(wait=True)
        if errors:
            raise errors[0]

    def __enter__(self) -> ShardedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- calls about one user: routed by `__getattr__` -------------------------------------
    def __getattr__(self, name: str) -> Callable[..., Any]:
        """Every port member not written out here is about one user: sent, unchanged, to the
        shard holding that user (`user_of`); a search first keeps the staleness bound
        (`_refresh`). So a port's new per-user member is served here without a line."""
        if name not in ROUTED:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

        def routed(*args: Any, **kwargs: Any) -> Any:
            user_id, search = user_of(args, kwargs)
            if search:
                self._refresh(user_id)
            return getattr(self.shard(user_id), name)(*args, **kwargs)

        routed.__name__ = name
        self.__dict__[name] = routed  # found directly from the next call on
        return routed

    # --- calls that split or merge across shards -------------------------------------------
    def append_turns(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[str]:
        by_shard: dict[int, list[TurnRecord]] = {}
        for turn in turns:
            by_shard.setdefault(shard_of(turn.user_id, len(self._shards)), []).append(turn)
        written: list[str] = []
        for index, part in by_shard.items():
            written += self._shards[index].append_turns(part, fresh_ids=fresh_ids)
        return written

    def sleep_log(self) -> LineLog:
        self._check_open()
        return self._sleep_log

    def catch_up(self) -> dict[str, int]:
        done = summed(self._each(lambda s: s.catch_up()))
        self._refreshed = self._clock()
        return done

    def replica_lag_s(self) -> float | None:
        """The most behind shard's."""
        lags = [lag for lag in (s.replica_lag_s() for s in self._shards) if lag is not None]
        return max(lags) if lags else None

    def iter_summaries(
        self,
        user_id: str | None = None,
        *,
        statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY,
        with_vectors: bool = True,
        batch_size: int = SCAN_BATCH_ROWS,
    ) -> Iterator[list[SummaryRecord]]:
        shards = self._shards if user_id is None else [self.shard(user_id)]
        return itertools.chain.from_iterable(
            s.iter_summaries(
                user_id, statuses=statuses, with_vectors=with_vectors, batch_size=batch_size
            )
            for s in shards
        )

    def users(self) -> list[str]:
        return sorted(set().union(*self._each(lambda s: s.users())))

    def counts(self, user_id: str | None = None) -> dict[str, int]:
        if user_id is not None:
            return self.shard(user_id).counts(user_id)
        return summed(self._each(lambda s: s.counts()))

    def read_traces(
        self,
        user_id: str | None = None,
        since: datetime | None = None,
        *,
        trace_id: str | None = None,
    ) -> list[dict[str, Any]]:
        if user_id is not None:
            return self.shard(user_id).read_traces(user_id, since, trace_id=trace_id)
        parts = self._each(lambda s: s.read_traces(None, since, trace_id=trace_id))
        return list(heapq.merge(*parts, key=lambda t: (t["created_at"], t["trace_id"])))

    # --- maintenance ---------------------------------------------------------------------
    def reindex(self, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        return summed([s.reindex(progress) for s in self._shards])

    def optimize(self) -> None:
        for store in self._shards:
            store.optimize()


# The port members `ShardedStore` routes to one user's shard: every one it does not write out.
ROUTED = members(*PORTS) - {n for n in vars(ShardedStore) if not n.startswith("_")}

__all__ = ["ROUTED", "ShardedLines", "ShardedStore", "summed", "user_of"]
