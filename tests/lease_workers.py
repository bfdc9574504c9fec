"""Code run in spawned worker processes by the lease tests (kept light to import)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from multiprocessing.synchronize import Event

from hymem.indexes.objects.objects import Objects

COUNTER_KEY = "counter.txt"


def increment_counter(
    uri: str,
    storage_options: dict[str, str],
    user_id: str,
    times: int,
    start: Event,
    locked: bool = True,
) -> None:
    """`times` read-modify-write increments of one counter object, each under the user's lease
    with a fence before the write, the way a store commits. The pause between read and write
    makes a lost update certain if two workers ever overlap; `locked=False` shows that."""
    from hymem.indexes.objects.leases import LeaseManager
    from hymem.indexes.objects.obstore import RemoteObjects

    objects = RemoteObjects(uri, storage_options)
    leases = LeaseManager(objects, holder=f"worker-{os.getpid()}", ttl_s=10, wait_s=30, linger_s=0)
    start.wait(30)
    try:
        for _ in range(times):
            if locked:
                with leases.hold(user_id):
                    _increment(objects, lambda: leases.fence(user_id))
            else:
                _increment(objects, lambda: None)
    finally:
        leases.close()


def _increment(objects: Objects, fence: Callable[[], object]) -> None:
    current = objects.get(COUNTER_KEY)
    value = int(current.data) if current else 0
    time.sleep(0.005)
    fence()
    objects.put(COUNTER_KEY, str(value + 1).encode())
