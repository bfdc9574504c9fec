"""Erasing a user of a shard other processes write: on a real S3-compatible server (moto on
127.0.0.1), real LanceDB, obstore and Tantivy, one process erases alice again and again while
another process adds turns for a neighbour living in alice's shard (same LanceDB tables). The
erase rewrites and prunes those tables; the neighbour's writes must neither fail nor lose nor
double anything, and alice must be gone."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest
from hymem.core.types import TurnStatus
from hymem.indexes.shards.placement import shard_of
from hymem.testing import store_of

from tests.fixtures_s3 import S3Target
from tests.s3_workers import open_memory, write_until_stopped

pytestmark = pytest.mark.integration

SPAWN = mp.get_context("spawn")
SHARDS = 4
ERASES = 3


def test_erasing_a_user_never_fails_a_neighbours_writes_from_another_process(
    s3_store: S3Target, tmp_path: Path
) -> None:
    """Before: the erase's purge deleted every file no version referenced yet, among them the
    data file of the neighbour's add in flight, whose commit then named a missing file (every
    later read of the shard: StoreCorruptedError, "hymem repair"); and a commit on a version
    the purge pruned failed with "Not found: .../_transactions/..." as damage too."""
    neighbour = next(
        u
        for u in (f"user{i}" for i in range(64))
        if shard_of(u, SHARDS) == shard_of("alice", SHARDS)
    )
    args = (s3_store.uri, s3_store.storage_options)
    with open_memory(*args, str(tmp_path / "eraser"), shards=SHARDS, lease_linger_s=0.0) as mem:
        mem.add("My neighbour keeps bees on the roof.", user_id=neighbour)
        mem.flush(user_id=neighbour)
        start, stop, out = SPAWN.Event(), SPAWN.Event(), SPAWN.Queue()
        worker = SPAWN.Process(
            target=write_until_stopped,
            args=(*args, str(tmp_path / "writer"), neighbour, start, stop, out),
        )
        worker.start()
        try:
            assert start.wait(120), "the writer process did not open the store"
            for n in range(ERASES):  # every erase runs while the neighbour writes
                for i in range(3):
                    mem.add(f"alice's safe code is 88{n}{i}.", user_id="alice")
                mem.flush(user_id="alice")
                assert mem.erase_user("alice").turns == 3
        finally:
            stop.set()
        acked, errors = out.get(timeout=240)
        worker.join(60)
        assert worker.exitcode == 0
        assert errors == [], "\n".join(errors)
        assert acked and len(acked) == len(set(acked))
    with open_memory(*args, str(tmp_path / "check")) as mem:
        turns = store_of(mem).get_turns(neighbour)
        stored = sorted(t.id for t in turns if t.text != "My neighbour keeps bees on the roof.")
        assert stored == sorted(acked)  # nothing lost, nothing twice
        assert {t.status for t in turns} == {TurnStatus.STORED}
        assert mem.stats(user_id="alice")["turns"] == 0
