"""Lease test helpers shared by the lease unit tests: a fake clock that moves only when told
(or when a manager sleeps), a manager on it with the heartbeat off, and a lease object's body."""

from __future__ import annotations

import json

from hymem.indexes.objects.leases import LeaseManager, lease_key
from hymem.indexes.objects.objects import MemoryObjects

TTL = 30.0


class FakeClock:
    """Time that moves only when told to, or when a manager sleeps."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def manager(objects: MemoryObjects, clock: FakeClock, holder: str, **kwargs: float) -> LeaseManager:
    options = {"ttl_s": TTL, "wait_s": 5.0, "linger_s": 2.0, **kwargs}
    return LeaseManager(
        objects, holder=holder, clock=clock, sleep=clock.sleep, heartbeat=False, **options
    )


def body(objects: MemoryObjects, user: str = "u") -> dict[str, object]:
    stored = objects.get(lease_key(user))
    assert stored is not None
    return json.loads(stored.data)


__all__ = ["TTL", "FakeClock", "body", "manager"]
