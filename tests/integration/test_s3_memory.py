"""hymem on an object store: a real S3-compatible server (moto, on 127.0.0.1), real LanceDB,
obstore, Tantivy replicas, and worker processes that really run side by side or get killed.

Covers what issue 16 lists: the whole API on s3://; two workers writing different users at once
(every acknowledged turn present, each finds the other's writes after catching up); two writers
for one user (no lost or duplicated turn); a worker SIGKILLed mid-commit (the next writer of
that user repairs); an object store answering 503 for a while (retried) or for good (typed)."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from hymem import Memory
from hymem.core.errors import LeaseLostError, StoreUnavailableError
from hymem.core.types import TurnStatus
from hymem.testing import store_of

from tests.fixtures_s3 import S3Target
from tests.fixtures_store import make_turns
from tests.s3_faults import FlakyProxy
from tests.s3_workers import find_after_refresh, open_memory, write_user

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SPAWN = mp.get_context("spawn")


def _mem(target: S3Target, tmp_path: Path, name: str = "w", **config: object) -> Memory:
    return open_memory(target.uri, target.storage_options, str(tmp_path / name), **config)


def _bucket_bytes(target: S3Target) -> dict[str, bytes]:
    s3 = boto3.client(
        "s3",
        endpoint_url=target.endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    found: dict[str, bytes] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=target.bucket):
        for obj in page.get("Contents", []):
            body = s3.get_object(Bucket=target.bucket, Key=obj["Key"])["Body"].read()
            found[obj["Key"]] = body
    return found


def test_the_whole_api_works_on_s3_and_erasure_leaves_no_byte(
    s3_store: S3Target, tmp_path: Path
) -> None:
    canary = "zanzibarquokka"
    with _mem(s3_store, tmp_path) as mem:
        for user in ("ann", "bob"):
            for i in range(4):
                mem.add(f"My {canary} kayak number {i} is red, said {user}.", user_id=user)
            mem.flush(user_id=user)
        hits = mem.search(f"{canary} kayak", user_id="ann")
        assert hits and all(h.user_id == "ann" for h in hits)
        answer = mem.ask("What colour is the kayak?", user_id="ann")
        assert answer.evidence and all(h.user_id == "ann" for h in answer.evidence)
        report = mem.sleep()
        assert report.users and report.deferred == 0
        before = _bucket_bytes(s3_store)
        assert any(b"said ann" in b for k, b in before.items() if "/lance/" in k)
        erased = mem.erase_user("ann")
        assert erased.turns == 4
        assert mem.search(f"{canary} kayak", user_id="ann") == []
        assert len(mem.search(f"{canary} kayak", user_id="bob")) > 0
    after = _bucket_bytes(s3_store)
    ann = [k for k, b in after.items() if b"said ann" in b]
    assert ann == [], ann
    assert any(b"said bob" in b for b in after.values())
    cache = [
        p for p in (tmp_path / "w").rglob("*") if p.is_file() and b"said ann" in p.read_bytes()
    ]
    assert cache == [], cache


def test_two_workers_write_different_users_at_once(s3_store: S3Target, tmp_path: Path) -> None:
    with _mem(s3_store, tmp_path, "setup"):
        pass  # the tables exist before the workers race to open them
    start, out = SPAWN.Event(), SPAWN.Queue()
    lines = {u: [f"{u} went sailing on day {i} with a blue boat." for i in range(12)] for u in "pq"}
    args = (s3_store.uri, s3_store.storage_options)
    workers = [
        SPAWN.Process(target=write_user, args=(*args, str(tmp_path / u), u, lines[u], start, out))
        for u in "pq"
    ]
    for w in workers:
        w.start()
    start.set()
    acked = dict(out.get(timeout=240) for _ in workers)
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    with _mem(s3_store, tmp_path, "check") as mem:
        for user in "pq":
            turns = store_of(mem).get_turns(user)
            assert sorted(t.id for t in turns) == sorted(acked[user])
            assert {t.status for t in turns} == {TurnStatus.STORED}
    # Each worker's cache sees the other's writes once it catches up.
    seen = SPAWN.Queue()
    reader = SPAWN.Process(
        target=find_after_refresh, args=(*args, str(tmp_path / "p"), "q", "sailing boat", seen)
    )
    reader.start()
    texts = seen.get(timeout=120)
    reader.join(60)
    assert texts and all("q went sailing" in t.lower() for t in texts)


def test_two_writers_for_one_user_lose_and_duplicate_nothing(
    s3_store: S3Target, tmp_path: Path
) -> None:
    with _mem(s3_store, tmp_path, "setup"):
        pass
    start, out = SPAWN.Event(), SPAWN.Queue()
    args = (s3_store.uri, s3_store.storage_options)
    workers = [
        SPAWN.Process(
            target=write_user,
            args=(
                *args,
                str(tmp_path / w),
                "shared",
                [f"{w} note {i}." for i in range(10)],
                start,
                out,
            ),
        )
        for w in ("w1", "w2")
    ]
    for w in workers:
        w.start()
    start.set()
    acked = [tid for _ in workers for tid in out.get(timeout=240)[1]]
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    with _mem(s3_store, tmp_path, "check") as mem:
        turns = store_of(mem).get_turns("shared")
    assert len(acked) == 20 and sorted(t.id for t in turns) == sorted(acked)
    assert len({t.seq for t in turns}) == 20  # no two writers gave out one sequence number
    assert sorted(t.text for t in turns) == sorted(
        f"{w} note {i}." for w in ("w1", "w2") for i in range(10)
    )


def test_a_worker_killed_mid_commit_is_repaired_by_the_next_writer(
    s3_store: S3Target, tmp_path: Path
) -> None:
    env = {**os.environ, "HYMEM_TEST_OPTIONS": json.dumps(s3_store.storage_options)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.s3_workers", s3_store.uri, str(tmp_path / "dead"), "kim"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=180,
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]
    left = _bucket_bytes(s3_store)
    assert any(k.startswith("mem/_hymem/journal/") for k in left), "no journal left behind"
    with _mem(s3_store, tmp_path, "next", lease_wait_s=30.0) as mem:
        mem.add("Kayak trip number 6 on the lake.", user_id="kim")  # waits out the dead lease
        mem.flush(user_id="kim")
        turns = store_of(mem).get_turns("kim")
        assert len(turns) == 7 and {t.status for t in turns} == {TurnStatus.STORED}
        seg_ids = {t.segment_id for t in turns}
        assert len(store_of(mem).get_segments("kim", sorted(seg_ids))) == len(seg_ids)
        assert mem.search("kayak lake", user_id="kim")
    assert not any(k.startswith("mem/_hymem/journal/") for k in _bucket_bytes(s3_store))


def test_503s_are_retried_and_a_lasting_outage_is_a_typed_error(
    s3_store: S3Target, tmp_path: Path
) -> None:
    with FlakyProxy(s3_store.endpoint) as proxy:
        target = s3_store.with_endpoint(proxy.endpoint)
        with _mem(target, tmp_path) as mem:
            mem.add("I like green tea.", user_id="ann")
            proxy.fail_next(2)  # within the retries the options allow
            mem.add("I like black tea.", user_id="ann")
            assert proxy.failed == 2
            proxy.fail_for(60)
            with pytest.raises(StoreUnavailableError, match="retry"):
                mem.add("I like oolong tea.", user_id="ann")
            with pytest.raises(StoreUnavailableError):
                mem.refresh()
            proxy.heal()
            mem.add("I like white tea.", user_id="ann")
            texts = [t.text for t in mem.pending(user_id="ann")]
    assert texts[:2] == ["I like green tea.", "I like black tea."]
    assert texts[-1] == "I like white tea."


def test_a_paused_writer_whose_lease_was_taken_writes_nothing(
    s3_store: S3Target, tmp_path: Path
) -> None:
    a = _mem(s3_store, tmp_path, "a", lease_ttl_s=1.0)
    b = _mem(s3_store, tmp_path, "b", lease_ttl_s=1.0, lease_wait_s=10.0)
    try:
        a.add("First note from worker a.", user_id="lee")
        late = make_turns("lee", 1, prefix="late-")
        with store_of(a).writing("lee"):
            leases = store_of(a)._access._leases  # type: ignore[attr-defined]
            leases._stop.set()  # a freezes (a long GC pause): its lease is not renewed
            leases._thread.join()
            b.add("A note from worker b.", user_id="lee")  # waits a's lease out, takes it
            with pytest.raises(LeaseLostError):
                store_of(a).append_turns(late)
        b.refresh()
        texts = [t.text for t in store_of(b).get_turns("lee")]
        assert texts == ["First note from worker a.", "A note from worker b."]
    finally:
        b.close()
        a.close()


def test_lancedb_option_aliases_work_beside_the_environment(
    s3_store: S3Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # as on most AWS hosts
    options = dict(s3_store.storage_options)
    options["endpoint"] = options.pop("aws_endpoint")
    options["region"] = options.pop("aws_region")
    with open_memory(s3_store.uri, options, str(tmp_path / "w")) as mem:
        mem.add("I keep bees on the roof.", user_id="ann")
        assert [t.text for t in mem.pending(user_id="ann")] == ["I keep bees on the roof."]


def test_workers_opening_a_new_store_together_all_succeed_and_agree(
    s3_store: S3Target, tmp_path: Path
) -> None:
    from tests.fixtures_s3 import new_bucket
    from tests.s3_workers import open_at_once

    # four processes racing to create each of four new stores: enough to interleave their
    # conditional writes on two cores (eight doubled the import time and found nothing more)
    workers, rounds = 4, 4
    targets = [new_bucket(s3_store.endpoint, prefix=f"new{n}") for n in range(rounds)]
    line, out = SPAWN.Barrier(workers), SPAWN.Queue()
    uris = [t.uri for t in targets]
    procs = [
        SPAWN.Process(
            target=open_at_once,
            args=(uris, s3_store.storage_options, str(tmp_path / f"w{i}"), line, out),
        )
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    results: dict[int, list[tuple[str, str]]] = {n: [] for n in range(rounds)}
    for _ in range(workers * rounds):
        n, kind, what = out.get(timeout=120)
        results[n].append((kind, what))
    for p in procs:
        p.join(60)
    for n, target in enumerate(targets):
        errors = [what for kind, what in results[n] if kind == "error"]
        assert not errors, "\n".join(errors)
        assert len({what for _, what in results[n]}) == 1, results[n]  # one identity for all
        with _mem(target, tmp_path, f"check{n}") as mem:
            rows = store_of(mem).tables.rows("meta", None)
            assert len(rows) == len({r["key"] for r in rows}), rows
            assert json.dumps(store_of(mem).meta(), sort_keys=True, default=str) == results[n][0][1]


MANIFEST = "/turns.lance/_versions/"


def test_an_add_whose_commit_outcome_was_lost_in_an_outage_is_resolved(
    s3_store: S3Target, tmp_path: Path
) -> None:
    """The turns commit landed, then the store went down before LanceDB learnt it had: once
    the store answers again, add() reads the table and reports the success it was."""
    with FlakyProxy(s3_store.endpoint) as proxy:
        target = s3_store.with_endpoint(proxy.endpoint)
        with _mem(target, tmp_path) as mem:
            mem.add([{"speaker": "ann", "text": "One.", "id": "t1"}], user_id="ann")
            proxy.lose_answers("PUT", MANIFEST, then_fail_for=8.0)  # past LanceDB's own checks
            result = mem.add([{"speaker": "ann", "text": "Two.", "id": "t2"}], user_id="ann")
            assert proxy.lost == 1 and result.turn_ids == ["t2"]
            assert [t.id for t in store_of(mem).get_turns("ann")] == ["t1", "t2"]


def test_an_add_whose_outcome_stays_unknown_says_so_and_a_retry_stores_it_once(
    s3_store: S3Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hymem.indexes.store.append_outcome as append_outcome

    monkeypatch.setattr(append_outcome, "APPEND_RESOLVE_S", 1.0)
    with FlakyProxy(s3_store.endpoint) as proxy:
        target = s3_store.with_endpoint(proxy.endpoint)
        with _mem(target, tmp_path) as mem:
            proxy.lose_answers("PUT", MANIFEST, then_fail_for=60.0)
            message = [{"speaker": "ann", "text": "Two.", "id": "t2"}]
            with pytest.raises(
                StoreUnavailableError, match="whether these turns were stored is"
            ) as e:
                mem.add(message, user_id="ann")
            assert "a retry stores nothing twice" not in str(e.value)
            proxy.heal()
            assert mem.add(message, user_id="ann").turn_ids == ["t2"]
            proxy.lose_answers("PUT", MANIFEST, then_fail_for=60.0)
            with pytest.raises(StoreUnavailableError, match="unknown"):
                mem.add("Three, without an id.", user_id="ann", request_id="three")
            proxy.heal()
            mem.add("Three, without an id.", user_id="ann", request_id="three")  # the retry
            texts = [t.text for t in store_of(mem).get_turns("ann")]
    assert texts == ["Two.", "Three, without an id."]
