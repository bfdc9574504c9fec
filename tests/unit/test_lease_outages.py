"""Leases through an object-store outage, and a second writer waiting on a busy user
(issue #27 case 7): what a `LeaseLostError` says happened, and that a waiting writer gets the
lease or `StoreLockedError` within `lease_wait_s`."""

from __future__ import annotations

import pytest
from hymem.core.errors import LeaseLostError, StoreLockedError, StoreUnavailableError
from hymem.indexes.objects.leases import LeaseManager
from hymem.indexes.objects.objects import MemoryObjects, Stored

from tests.fixtures_leases import TTL, FakeClock, body, manager


class FlakyObjects(MemoryObjects):
    """The in-memory twin, answering like an object store that is down while `down`."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise StoreUnavailableError("the object store answered 503 (test)")

    def get(self, key: str) -> Stored | None:
        self._check()
        return super().get(key)

    def create(self, key: str, data: bytes) -> str | None:
        self._check()
        return super().create(key, data)

    def replace(self, key: str, data: bytes, etag: str) -> str | None:
        self._check()
        return super().replace(key, data, etag)

    def put(self, key: str, data: bytes) -> str:
        self._check()
        return super().put(key, data)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def flaky() -> FlakyObjects:
    return FlakyObjects()


def _renewal_hit_by_an_outage(a: LeaseManager, flaky: FlakyObjects, clock: FakeClock) -> None:
    clock.now += TTL / 2  # the heartbeat is due
    flaky.down = True
    a.tick()  # the renewal fails: the grant is dropped
    flaky.down = False


def test_a_renewal_lost_to_an_outage_is_taken_back_when_nobody_else_took_it(
    flaky: FlakyObjects, clock: FakeClock
) -> None:
    a = manager(flaky, clock, "a")
    with a.hold("u"):
        _renewal_hit_by_an_outage(a, flaky, clock)
        clock.now += TTL  # expired meanwhile, and no other worker exists
        lease = a.fence("u")
    assert lease.token == 1 and body(flaky)["holder"] == "a"


def test_a_fence_during_the_outage_says_the_store_is_unavailable(
    flaky: FlakyObjects, clock: FakeClock
) -> None:
    a = manager(flaky, clock, "a")
    with a.hold("u"):
        _renewal_hit_by_an_outage(a, flaky, clock)
        flaky.down = True
        with pytest.raises(StoreUnavailableError):
            a.fence("u")


def test_a_lease_really_taken_over_after_an_outage_names_what_happened(
    flaky: FlakyObjects, clock: FakeClock
) -> None:
    a, b = manager(flaky, clock, "a"), manager(flaky, clock, "b")
    with a.hold("u"):
        _renewal_hit_by_an_outage(a, flaky, clock)
        clock.now += TTL
        b.acquire("u")
        with pytest.raises(
            LeaseLostError,
            match=r"renewal failed while the object store was unavailable.*"
            r"another worker \(b\) took it over",
        ):
            a.fence("u")


def test_a_waiting_writer_gets_the_lease_from_a_busy_holder_within_lease_wait(
    flaky: FlakyObjects, clock: FakeClock
) -> None:
    """a writes the user in back-to-back calls (its lease lingers between them); b waits. b
    must get the lease, or StoreLockedError, within its lease_wait_s, never wait for good."""
    a = manager(flaky, clock, "a", linger_s=2.0)
    b = manager(flaky, clock, "b", wait_s=20.0)
    with a.hold("u"):
        pass
    start = clock.now
    a_turns = 0

    def a_keeps_writing(seconds: float) -> None:
        nonlocal a_turns
        clock.now += seconds  # b sleeps: meanwhile a writes, one call after another
        with a.hold("u"):
            a_turns += 1

    b._sleep = a_keeps_writing
    try:
        lease = b.acquire("u")
    except StoreLockedError:
        lease = None
    assert clock.now - start <= 20.0 + 1.0
    assert lease is not None, "a holder in back-to-back calls starved the waiting writer"
    assert body(flaky)["holder"] == "b" and a_turns > 0
