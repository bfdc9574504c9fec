"""Leases and retries against a real S3 server (moto): two OS processes, one user, no lost
update; and obstore's bounded retries through a proxy that answers 503 SlowDown."""

from __future__ import annotations

import multiprocessing
import time

import pytest
from hymem.core.errors import StoreUnavailableError
from hymem.indexes.objects.obstore import RemoteObjects

from tests.fixtures_s3 import S3Target
from tests.lease_workers import COUNTER_KEY, increment_counter
from tests.s3_faults import FlakyProxy

pytestmark = pytest.mark.integration

INCREMENTS = 30


def run_workers(target: S3Target, *, locked: bool) -> int:
    """Two spawned processes doing INCREMENTS each; the final counter value."""
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    args = (target.uri, target.storage_options, "alice", INCREMENTS, start, locked)
    procs = [ctx.Process(target=increment_counter, args=args) for _ in range(2)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    stored = RemoteObjects(target.uri, target.storage_options).get(COUNTER_KEY)
    assert stored is not None
    return int(stored.data)


def test_two_processes_never_lose_an_update(s3_store: S3Target) -> None:
    assert run_workers(s3_store, locked=True) == 2 * INCREMENTS


def test_retries_ride_out_a_burst_of_503(s3_store: S3Target) -> None:
    with FlakyProxy(s3_store.endpoint) as proxy:
        options = s3_store.with_endpoint(proxy.endpoint).storage_options
        objects = RemoteObjects(s3_store.uri, options)
        etag = objects.create("k.json", b"v1")
        assert etag
        proxy.fail_next(2)  # within client_max_retries=2
        assert objects.replace("k.json", b"v2", etag)
        proxy.fail_next(2)
        assert objects.get("k.json").data == b"v2"  # type: ignore[union-attr]
        assert proxy.failed == 4 and proxy.seen >= 7


def test_persistent_503_raises_store_unavailable_in_budget(s3_store: S3Target) -> None:
    with FlakyProxy(s3_store.endpoint) as proxy:
        options = s3_store.with_endpoint(proxy.endpoint).storage_options
        assert options["client_max_retries"] == "2" and options["client_retry_timeout"] == "2"
        objects = RemoteObjects(s3_store.uri, options)
        proxy.fail_for(60)
        for call in (lambda: objects.get("k.json"), lambda: objects.create("k.json", b"x")):
            seen, began = proxy.seen, time.monotonic()
            with pytest.raises(StoreUnavailableError, match="transient"):
                call()
            assert time.monotonic() - began < 3.0  # client_retry_timeout=2 s, plus slack
            assert proxy.seen - seen == 3  # the first try and client_max_retries=2
        proxy.heal()
        assert objects.create("k.json", b"x")  # nothing was written while it failed
