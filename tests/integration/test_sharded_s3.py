"""User-sharded stores on a real S3-compatible server (moto on 127.0.0.1), real LanceDB,
obstore and Tantivy: where each user's bytes go, which shard count a store keeps, what a damaged
manifest does, and two worker processes writing users of different shards at once. (The router
keeps every `Storage` promise: the conformance suite runs it as "memory-sharded".)"""

from __future__ import annotations

import multiprocessing as mp
import threading
from pathlib import Path

import boto3
import pytest
from hymem import Memory
from hymem.core.errors import StoreError
from hymem.core.types import TurnStatus
from hymem.indexes.shards.placement import MANIFEST_KEY, shard_of
from hymem.indexes.shards.router import ShardedStore
from hymem.testing import store_of

from tests.backfill_job import histories, snapshot
from tests.backfill_job import open_memory as open_memory_at_folder
from tests.fixtures_s3 import REGION, S3Target
from tests.s3_workers import open_memory, write_user

pytestmark = pytest.mark.integration

SPAWN = mp.get_context("spawn")


def _mem(target: S3Target, tmp_path: Path, name: str = "w", **config: object) -> Memory:
    return open_memory(target.uri, target.storage_options, str(tmp_path / name), **config)


def _s3(target: S3Target) -> object:
    return boto3.client(
        "s3",
        endpoint_url=target.endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def _keys_holding(target: S3Target, needle: bytes) -> list[str]:
    s3 = _s3(target)
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=target.bucket):  # type: ignore[attr-defined]  # boto3 clients are untyped
        for obj in page.get("Contents", []):
            body = s3.get_object(Bucket=target.bucket, Key=obj["Key"])["Body"].read()  # type: ignore[attr-defined]  # boto3 clients are untyped
            if needle in body:
                found.append(obj["Key"])
    return found


def test_each_user_lives_in_its_own_shard_and_the_count_is_fixed_at_creation(
    s3_store: S3Target, tmp_path: Path
) -> None:
    users = ["ann", "bob", "cat", "dan", "eve", "fay"]
    with _mem(s3_store, tmp_path, shards=3) as mem:
        store = store_of(mem)
        assert isinstance(store, ShardedStore) and store.shard_count == 3
        for user in users:
            for i in range(3):
                mem.add(f"{user} keeps kayak number {i} in the red shed.", user_id=user)
            mem.flush(user_id=user)
        assert store.users() == sorted(users)
        assert store.counts()["turns"] == 18
        assert [h.user_id for h in mem.search("kayak shed", user_id="cat")] == ["cat"] * 3
        erased = mem.erase_user("bob")
        assert erased.turns == 3 and store.counts()["turns"] == 15
    prefix = s3_store.uri.split("/", 3)[3]
    for user in users:
        keys = _keys_holding(s3_store, f"{user} keeps kayak".encode())
        if user == "bob":
            assert keys == []  # erased: no byte left in any shard
            continue
        shard = f"{prefix}/shards/{shard_of(user, 3):02d}/"
        assert keys and all(k.startswith(shard) for k in keys), (user, keys)
    # Reopened asking for another count: the manifest decides.
    with _mem(s3_store, tmp_path, "again", shards=5) as mem:
        assert store_of(mem).meta()["shards"] == 3
        assert mem.users() == sorted(set(users) - {"bob"})
        assert store_of(mem).get_turns("fay")[0].status is TurnStatus.STORED


def test_a_store_made_unsharded_keeps_working_with_one_shard(
    s3_store: S3Target, tmp_path: Path
) -> None:
    with _mem(s3_store, tmp_path, "old") as mem:
        mem.add("The old store remembers the lighthouse.", user_id="u")
        mem.flush(user_id="u")
    with _mem(s3_store, tmp_path, "new", shards=4) as mem:
        assert not isinstance(store_of(mem), ShardedStore)
        assert [h.user_id for h in mem.search("lighthouse", user_id="u")] == ["u"]
    assert _keys_holding(s3_store, b'"shards"') == []  # no manifest was written beside it


def test_a_damaged_manifest_is_a_typed_error_not_a_reshuffle(
    s3_store: S3Target, tmp_path: Path
) -> None:
    with _mem(s3_store, tmp_path, shards=2) as mem:
        mem.add("A note.", user_id="u")
    key = f"{s3_store.uri.split('/', 3)[3]}/{MANIFEST_KEY}"
    _s3(s3_store).put_object(Bucket=s3_store.bucket, Key=key, Body=b"{not json")  # type: ignore[attr-defined]  # boto3 clients are untyped
    with pytest.raises(StoreError, match="shard manifest"):
        _mem(s3_store, tmp_path, "after")


def test_openers_of_a_new_store_agree_on_one_shard_count(
    s3_store: S3Target, tmp_path: Path
) -> None:
    counts: list[int] = []
    line = threading.Barrier(2)

    def open_with(n: int) -> None:
        line.wait(30)
        with _mem(s3_store, tmp_path, f"o{n}", shards=n) as mem:
            counts.append(int(store_of(mem).meta()["shards"]))

    threads = [threading.Thread(target=open_with, args=(n,)) for n in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(counts) == 2 and counts[0] == counts[1] in (2, 3)


def test_two_workers_write_users_of_different_shards_at_once(
    s3_store: S3Target, tmp_path: Path
) -> None:
    other = next(u for u in "qrstuvwxyz" if shard_of(u, 2) != shard_of("p", 2))
    users = ["p", other]  # the point: no table in common
    with _mem(s3_store, tmp_path, "setup", shards=2):
        pass
    start, out = SPAWN.Event(), SPAWN.Queue()
    lines = {u: [f"{u} went sailing on day {i} with a blue boat." for i in range(8)] for u in users}
    args = (s3_store.uri, s3_store.storage_options)
    workers = [
        SPAWN.Process(target=write_user, args=(*args, str(tmp_path / u), u, lines[u], start, out))
        for u in users
    ]
    for w in workers:
        w.start()
    start.set()
    acked = dict(out.get(timeout=240) for _ in workers)
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    with _mem(s3_store, tmp_path, "check") as mem:
        for user in users:
            turns = store_of(mem).get_turns(user)
            assert sorted(t.id for t in turns) == sorted(acked[user])
            assert {t.status for t in turns} == {TurnStatus.STORED}


def test_a_backfill_into_a_sharded_store_stores_every_turn_once(
    s3_store: S3Target, tmp_path: Path
) -> None:
    users = histories(4)
    with _mem(s3_store, tmp_path, "b1", shards=2) as mem:
        first = mem.backfill(users[:3])
        assert first.failed == {} and first.written_turns == 3 * 12
    with _mem(s3_store, tmp_path, "b2") as mem:
        again = mem.backfill(users)  # a re-run that also brings a new user
        assert sorted(again.skipped) == [h.user_id for h in users[:3]]
        assert again.written_turns == 12
        got = {h.user_id: snapshot(store_of(mem), h.user_id) for h in users}
    with open_memory_at_folder(str(tmp_path / "folder")) as mem:
        mem.backfill(users)
        assert got == {h.user_id: snapshot(store_of(mem), h.user_id) for h in users}
