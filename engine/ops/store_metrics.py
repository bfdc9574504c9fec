"""The store's sizes and replica lag, read when Prometheus scrapes, cached so scrapes stay cheap.

Sizes come from the store's own `counts()` (LanceDB row counts: a filter reads its one column,
never texts or vectors) and `users()` (one column of the turn and summary tables). That is
cheap on a local folder but is a few object-store requests on S3, so the values are read at
most once per `ttl_s` and scrapes in between get the cached ones;
`hymem_store_sizes_age_seconds` says how old they are.

Replica lag exists on object stores only. There each worker's lexical index is a replica caught
up from other workers' commits (`hymem.indexes.objects.replica_sync`): after this worker's own
commits, and before a search once the last catch-up is older than `refresh_s`. The lag is the
seconds since the last catch-up: how far behind other workers' writes this worker's view may
be. A busy worker keeps it near `refresh_s`; an idle one lets it grow, and catches up on its
next search. Sharded stores report their most behind shard.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from hymem.core.errors import HymemError
from hymem.core.logging import get_logger
from hymem.indexes.ports import Storage
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

log = get_logger("hymem.ops.metrics")

DEFAULT_SIZES_TTL_S = 15.0
# Gauge name -> (the key of `Storage.counts()`, its help text); users is counted apart.
SIZES: dict[str, tuple[str, str]] = {
    "hymem_store_turns": ("turns", "Turns in the store (every user), pending or stored."),
    "hymem_store_pending_turns": (
        "pending_turns",
        "Turns accepted but not yet summarised (not yet searchable).",
    ),
    "hymem_store_segments": ("segments", "Level-2 segments in the store."),
    "hymem_store_summaries": ("summaries", "Summary versions in the store, every status."),
    "hymem_store_active_summaries": ("active_summaries", "Active (current) summaries."),
    "hymem_store_traces": ("traces", "Ask traces kept in the store."),
}
USERS = ("hymem_store_users", "Users with turns or summaries in the store.")
AGE = ("hymem_store_sizes_age_seconds", "Seconds since the hymem_store_* sizes were counted.")
ERRORS = ("hymem_store_size_errors", "Failures to count the store's sizes (the last are kept).")
LAG = (
    "hymem_replica_lag_seconds",
    "Object stores only: seconds since this worker last caught up with other workers' commits.",
)


def replica_lag_s(store: Any) -> float | None:
    """`Storage.replica_lag_s`: seconds since the store's view last caught up with other
    workers' commits (the most behind shard's on a sharded store); None with one writer."""
    lag = store.replica_lag_s()
    return None if lag is None else float(lag)


class StoreCollector:
    """A custom collector: the store's sizes (cached `ttl_s`) and replica lag (always fresh:
    reading it costs nothing). A failure to count is logged and counted, never raised into
    the scrape: the last good sizes are kept and their age grows."""

    def __init__(
        self,
        store: Callable[[], Storage],
        *,
        ttl_s: float = DEFAULT_SIZES_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store  # called at each read: a closed Memory raises then
        self._ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._sizes: dict[str, int] | None = None
        self._counted_at = -math.inf
        self._errors = 0

    def describe(self) -> Iterable[Metric]:
        """The names only, so registering touches no store (the registry checks names)."""
        names = [*SIZES, USERS[0], AGE[0], LAG[0]]
        return [
            *(GaugeMetricFamily(name, "") for name in names),
            CounterMetricFamily(ERRORS[0], ""),
        ]

    def collect(self) -> Iterable[Metric]:
        sizes = self._current_sizes()
        if sizes is not None:
            for name, (key, text) in SIZES.items():
                yield GaugeMetricFamily(name, text, value=sizes[key])
            yield GaugeMetricFamily(USERS[0], USERS[1], value=sizes["users"])
            yield GaugeMetricFamily(AGE[0], AGE[1], value=self._clock() - self._counted_at)
        yield CounterMetricFamily(ERRORS[0], ERRORS[1], value=self._errors)
        lag = self._lag()
        if lag is not None:
            yield GaugeMetricFamily(LAG[0], LAG[1], value=lag)

    def _current_sizes(self) -> dict[str, int] | None:
        """The cached sizes, counted again once older than `ttl_s`; one scrape counts while
        the others wait for it rather than counting too."""
        with self._lock:
            if self._clock() - self._counted_at < self._ttl_s:
                return self._sizes
            try:
                store = self._store()
                sizes = dict(store.counts(None))
                sizes["users"] = len(store.users())
            except HymemError as exc:  # closed, or an object store that does not answer
                self._errors += 1
                log.warning("metrics.store_sizes_failed", error=str(exc))
                return self._sizes
            self._sizes, self._counted_at = sizes, self._clock()
            return sizes

    def _lag(self) -> float | None:
        try:
            return replica_lag_s(self._store())
        except HymemError:  # closed: no replica to speak of
            return None


__all__ = ["DEFAULT_SIZES_TTL_S", "StoreCollector", "replica_lag_s"]
