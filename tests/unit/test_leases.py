"""Leases on the in-memory twin, with a fake clock and the heartbeat driven by `tick()`."""

from __future__ import annotations

import threading
import time

import pytest
from hymem.core.errors import LeaseLostError, StoreCorruptedError, StoreLockedError
from hymem.indexes.objects.leases import LeaseManager, lease_key
from hymem.indexes.objects.objects import MemoryObjects

from tests.fixtures_leases import TTL, FakeClock, body, manager


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def objects() -> MemoryObjects:
    return MemoryObjects()


def test_acquire_free_lease(objects: MemoryObjects, clock: FakeClock) -> None:
    lease = manager(objects, clock, "a").acquire("u")
    assert (lease.user_id, lease.token, lease.expires_at) == ("u", 1, clock.now + TTL)
    assert lease.stale  # first acquisition by this manager: callers reload
    assert body(objects) == {
        "user_id": "u",
        "holder": "a",
        "token": 1,
        "expires_at": clock.now + TTL,
        "released": False,
    }
    assert lease_key("u").startswith("_hymem/leases/") and len(lease_key("u")) == 59


def test_live_holder_makes_others_wait_then_raise(objects: MemoryObjects, clock: FakeClock) -> None:
    manager(objects, clock, "a").acquire("u")
    start = clock.now
    with pytest.raises(StoreLockedError, match=r"'u'.*another worker \(a"):
        manager(objects, clock, "b", wait_s=5.0).acquire("u")
    assert clock.now - start == pytest.approx(5.0)
    assert len(clock.slept) > 3  # it polled, with backoff
    assert 4 * clock.slept[0] < max(clock.slept) <= 1.0  # backoff grows, capped
    assert body(objects)["holder"] == "a"


def test_other_users_are_independent(objects: MemoryObjects, clock: FakeClock) -> None:
    manager(objects, clock, "a").acquire("u")
    assert manager(objects, clock, "b").acquire("v").token == 1
    assert clock.slept == []


def test_takeover_after_expiry_then_old_fence_fails(
    objects: MemoryObjects, clock: FakeClock
) -> None:
    a, b = manager(objects, clock, "a"), manager(objects, clock, "b")
    assert a.acquire("u").token == 1
    clock.now += TTL + 0.1  # a paused past its lease
    taken = b.acquire("u")
    assert (taken.token, taken.stale) == (2, True)
    assert clock.slept == []
    with pytest.raises(LeaseLostError, match="'u'"):
        a.fence("u")
    assert body(objects)["holder"] == "b"


def test_stale_old_holder_reacquires_with_stale_true(
    objects: MemoryObjects, clock: FakeClock
) -> None:
    a, b = manager(objects, clock, "a"), manager(objects, clock, "b")
    a.acquire("u")
    a.release("u")
    b.acquire("u")
    b.release("u")
    lease = a.acquire("u")
    assert (lease.token, lease.stale) == (3, True)


def test_fence_extends_the_lease(objects: MemoryObjects, clock: FakeClock) -> None:
    a = manager(objects, clock, "a")
    a.acquire("u")
    clock.now += 20
    fenced = a.fence("u")
    assert fenced.expires_at == clock.now + TTL and not fenced.stale
    clock.now += 20  # past the first expiry, within the fenced one
    with pytest.raises(StoreLockedError):
        manager(objects, clock, "b", wait_s=1.0).acquire("u")


def test_fence_without_a_lease_raises(objects: MemoryObjects, clock: FakeClock) -> None:
    with pytest.raises(LeaseLostError):
        manager(objects, clock, "a").fence("u")


def test_fence_after_expiry_succeeds_when_nobody_took_over(
    objects: MemoryObjects, clock: FakeClock
) -> None:
    a = manager(objects, clock, "a")
    a.acquire("u")
    clock.now += TTL * 3  # expired, but the object is unchanged: still safely ours
    assert a.fence("u").token == 1


def test_release_then_reacquire(objects: MemoryObjects, clock: FakeClock) -> None:
    a, b = manager(objects, clock, "a"), manager(objects, clock, "b")
    a.acquire("u")
    a.release("u")
    assert body(objects)["released"] is True and body(objects)["token"] == 1
    again = a.acquire("u")
    assert (again.token, again.stale) == (2, False)  # nobody else held it in between
    a.release("u")
    other = b.acquire("u")
    assert (other.token, other.stale) == (3, True)
    assert clock.slept == []  # a released lease is taken without waiting


def test_release_after_takeover_does_not_clobber(objects: MemoryObjects, clock: FakeClock) -> None:
    a, b = manager(objects, clock, "a"), manager(objects, clock, "b")
    a.acquire("u")
    clock.now += TTL + 1
    b.acquire("u")
    a.release("u")  # conflict: ignored
    assert body(objects)["holder"] == "b" and body(objects)["released"] is False


def test_hold_is_reentrant(objects: MemoryObjects, clock: FakeClock) -> None:
    a = manager(objects, clock, "a")
    with a.hold("u") as outer:
        with a.hold("u") as inner:
            assert inner.token == outer.token and not inner.stale
        a.tick()
        assert body(objects)["released"] is False
    assert body(objects)["released"] is False  # lingers after the block


def test_linger_release_by_tick(objects: MemoryObjects, clock: FakeClock) -> None:
    a = manager(objects, clock, "a", linger_s=2.0)
    with a.hold("u"):
        clock.now += 5
        a.tick()  # busy: never released, however long
        assert body(objects)["released"] is False
    clock.now += 1
    a.tick()
    assert body(objects)["released"] is False
    clock.now += 1.5
    a.tick()
    assert body(objects)["released"] is True
    assert manager(objects, clock, "b").acquire("u").token == 2
    assert clock.slept == []


def test_linger_zero_releases_on_exit(objects: MemoryObjects, clock: FakeClock) -> None:
    a = manager(objects, clock, "a", linger_s=0)
    with a.hold("u"):
        assert body(objects)["released"] is False
    assert body(objects)["released"] is True


def test_tick_renews_a_busy_lease(objects: MemoryObjects, clock: FakeClock) -> None:
    a = manager(objects, clock, "a")
    with a.hold("u"):
        clock.now += TTL / 3 + 1
        a.tick()
        assert body(objects)["expires_at"] == clock.now + TTL
        clock.now += TTL - 1  # past the first expiry
        with pytest.raises(StoreLockedError):
            manager(objects, clock, "b", wait_s=0.5).acquire("u")


def test_tick_drops_a_lease_taken_over(objects: MemoryObjects, clock: FakeClock) -> None:
    a, b = manager(objects, clock, "a"), manager(objects, clock, "b")
    with a.hold("u"):
        clock.now += TTL + 1
        b.acquire("u")
        a.tick()  # renewal fails: dropped
        with pytest.raises(LeaseLostError):
            a.fence("u")
    assert body(objects)["holder"] == "b"


def test_lost_answer_of_our_own_write_is_recognised(
    objects: MemoryObjects, clock: FakeClock
) -> None:
    """A retried request whose first attempt did land reads as a conflict; the bytes tell."""

    class LostAnswers(MemoryObjects):
        def replace(self, key: str, data: bytes, etag: str) -> str | None:
            super().replace(key, data, etag)
            return None

    flaky = LostAnswers()
    a = manager(flaky, clock, "a")
    a.acquire("u")
    clock.now += 10
    assert a.fence("u").expires_at == clock.now + TTL


def test_a_corrupt_lease_object_is_reported(objects: MemoryObjects, clock: FakeClock) -> None:
    objects.put(lease_key("u"), b"not json")
    with pytest.raises(StoreCorruptedError, match="lease"):
        manager(objects, clock, "a").acquire("u")


def test_threads_of_one_manager_take_turns(objects: MemoryObjects) -> None:
    a = LeaseManager(objects, holder="a", heartbeat=False)
    inside, overlaps = [0], [0]

    def work() -> None:
        for _ in range(20):
            with a.hold("u"):
                inside[0] += 1
                overlaps[0] += inside[0] > 1
                time.sleep(0.001)
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert overlaps[0] == 0
    a.close()


def test_heartbeat_thread_and_close(objects: MemoryObjects) -> None:
    """The heartbeat renews the lease before it expires. Waits for the renewal itself, then
    looks as a worker whose clock stands past the first expiry (before: a 0.3 s ttl and a
    0.35 s sleep, which a busy machine could outlast before the heartbeat thread ran)."""
    a = LeaseManager(objects, holder="a", ttl_s=0.3, linger_s=10)
    a.acquire("u")
    assert any(t.name == "hymem-leases" and t.daemon for t in threading.enumerate())

    def expiry() -> float:
        value = body(objects)["expires_at"]
        assert isinstance(value, int | float)
        return float(value)

    first_expiry = expiry()
    deadline = time.monotonic() + 30
    while expiry() <= first_expiry:
        assert time.monotonic() < deadline, "the heartbeat never renewed the lease"
        time.sleep(0.01)
    past_first_expiry = first_expiry + 0.01
    with pytest.raises(StoreLockedError):
        LeaseManager(
            objects, holder="b", wait_s=0, heartbeat=False, clock=lambda: past_first_expiry
        ).acquire("u")
    a.close()
    assert not any(t.name == "hymem-leases" for t in threading.enumerate())
    assert body(objects)["released"] is True
