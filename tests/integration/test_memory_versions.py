"""A memory's versions through `Memory` on a real folder (LanceDB + Tantivy): corrections in
any order, or from many threads at once, leave at most one active version, so `get_all` lists
the memory and `search` finds it at most once, and a correction that loses the race gets the
typed `VersionConflictError` (409 over REST, the same class again from `hymem.client`)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from hymem import Memory, MemoryConfig
from hymem.client import Client
from hymem.core.errors import CommitConflictError, VersionConflictError
from hymem.core.types import SummaryStatus
from hymem.indexes.lance import schema as S
from hymem.testing import store_of

from tests.fixtures_s3 import S3Target
from tests.fixtures_serve import Served, hashing_memory
from tests.s3_workers import open_memory

pytestmark = pytest.mark.integration

USER = "ann"
QUERY = "beagle Biscuit"
KEY = {"Authorization": "Bearer ka"}  # alice's key in SERVE_KEYS is bound to "alice"


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with hashing_memory(tmp_path / "m") as memory:
        yield memory


def _seed(mem: Memory, user: str = USER) -> str:
    """One memory about a beagle and one about a choir; returns the beagle's memory id."""
    mem.add([{"speaker": "Ann", "text": "I adopted a beagle named Biscuit"}], user_id=user)
    mem.add([{"speaker": "Ann", "text": "I sing in a choir on Tuesdays"}], user_id=user)
    mem.flush(user_id=user)
    return next(r.memory_id for r in mem.get_all(user_id=user).items if "Biscuit" in r.text)


def _active(mem: Memory, memory_id: str, user: str = USER) -> list[str]:
    return [v.id for v in mem.history(memory_id, user_id=user) if v.status is SummaryStatus.ACTIVE]


def _listed(mem: Memory, memory_id: str, user: str = USER) -> int:
    return sum(r.memory_id == memory_id for r in mem.get_all(user_id=user, limit=1000).items)


def _found(mem: Memory, memory_id: str, user: str = USER) -> int:
    return sum(h.memory_id == memory_id for h in mem.search(QUERY, user_id=user, k=50))


def test_restoring_version_one_and_then_the_tombstone_leaves_one_active_version(
    mem: Memory,
) -> None:
    memory_id = _seed(mem)
    tomb = mem.delete(memory_id, user_id=USER)
    mem.restore(memory_id, user_id=USER)  # version 1 back
    mem.restore(tomb.id, user_id=USER)  # then the tombstone: the deleted text back, once
    assert _active(mem, memory_id) == [tomb.id]
    assert (_listed(mem, memory_id), _found(mem, memory_id)) == (1, 1)
    assert mem.get(memory_id, user_id=USER).summary.id == tomb.id
    mem.restore(memory_id, user_id=USER)  # version 1 again, beside the newer tombstone
    assert _active(mem, memory_id) == [memory_id]
    new = mem.update(memory_id, "Ann adopted a beagle named Biscuit in May", user_id=USER)
    assert new.version == 3  # after the newest version, not after the one restored
    assert _active(mem, memory_id) == [new.id]
    assert (_listed(mem, memory_id), _found(mem, memory_id)) == (1, 1)


def test_many_threads_correcting_one_memory_keep_one_active_version(mem: Memory) -> None:
    memory_id = _seed(mem)
    other = next(r.id for r in mem.get_all(user_id=USER).items if r.memory_id != memory_id)
    failures: list[str] = []
    observed: list[tuple[str, int, int]] = []
    done: list[str] = []
    running = threading.Event()
    running.set()

    def correct(n: int) -> None:
        rnd = random.Random(n)
        for i in range(6):
            action = rnd.choice(["update", "delete", "restore"])
            try:
                if action == "update":
                    mem.update(memory_id, f"Ann has a beagle named Biscuit {n}.{i}", user_id=USER)
                elif action == "delete":
                    mem.delete(memory_id, user_id=USER)
                else:
                    versions = mem.history(memory_id, user_id=USER)
                    mem.restore(rnd.choice(versions).id, user_id=USER)
                done.append(action)
            except VersionConflictError:
                pass
            except Exception as exc:  # anything else fails the test
                failures.append(f"{action}: {type(exc).__name__}: {exc}")
            observed.append(
                ("active, listed", len(_active(mem, memory_id)), _listed(mem, memory_id))
            )

    def watch() -> None:
        while running.is_set():
            observed.append(("listed, found", _listed(mem, memory_id), _found(mem, memory_id)))

    watcher = threading.Thread(target=watch)
    workers = [threading.Thread(target=correct, args=(n,)) for n in range(6)]
    watcher.start()
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    running.clear()
    watcher.join()
    assert [seen for seen in observed if max(seen[1:]) > 1] == []
    assert failures == []
    assert done, "no correction went through"
    active = _active(mem, memory_id)
    assert len(active) <= 1
    assert _listed(mem, memory_id) == len(active) and _found(mem, memory_id) <= 1
    assert [r.id for r in mem.get_all(user_id=USER).items if r.memory_id != memory_id] == [other]


def test_a_version_tantivy_still_matches_after_lancedb_retired_it_is_not_served(
    tmp_path: Path,
) -> None:
    """A version change commits LanceDB before Tantivy; a search in between finds the retired
    version in Tantivy and its successor in LanceDB, and must serve only the successor."""
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing", dense_cache_mb=0)
    with hashing_memory(tmp_path / "m", config) as mem:
        memory_id = _seed(mem)
        # The moment between the two commits, held still: LanceDB has retired version 1,
        # the lexical index has not heard of it yet.
        row = store_of(mem).tables.rows(S.SUMMARIES, f"id = '{memory_id}'")[0]
        row.update(status="superseded", superseded_by="elsewhere")
        data = pa.Table.from_pylist([row], schema=S.summaries_schema(64))
        store_of(mem).tables.upsert(S.SUMMARIES, data, on=["user_id", "id"])
        lexical = mem.search(QUERY, user_id=USER, mode="lexical")
        assert [h.id for h in lexical if h.memory_id == memory_id] == []
        assert _found(mem, memory_id) == 0
        every = mem.search(QUERY, user_id=USER, include_inactive=True)
        assert [h.id for h in every if h.memory_id == memory_id] == [memory_id]


def test_a_conflicting_correction_is_409_over_rest_and_typed_in_the_client(
    tmp_path: Path,
) -> None:
    memory = hashing_memory(tmp_path / "served")
    memory_id = _seed(memory, "alice")
    served = Served(memory)
    try:
        http = served.http
        gone = http.delete(f"/v1/memories/{memory_id}", params={"user_id": "alice"}, headers=KEY)
        assert gone.status_code == 200
        body = {"user_id": "alice", "text": "Alice has a beagle named Rex"}
        late = http.put(f"/v1/memories/{memory_id}", json=body, headers=KEY)
        assert late.status_code == 409 and late.json()["error"] == "VersionConflictError"
        assert "restore" in late.json()["message"]
        back = http.post(
            f"/v1/versions/{memory_id}/restore", json={"user_id": "alice"}, headers=KEY
        )
        assert back.status_code == 200 and back.json()["status"] == "active"
        again = http.post(
            f"/v1/versions/{memory_id}/restore", json={"user_id": "alice"}, headers=KEY
        )
        assert again.status_code == 409 and again.json()["error"] == "VersionConflictError"
        with Client(served.url, "ka") as client:
            client.delete(memory_id, user_id="alice")
            with pytest.raises(VersionConflictError) as raised:
                client.update(memory_id, "Alice has a beagle named Rex", user_id="alice")
            assert isinstance(raised.value, CommitConflictError)
    finally:
        served.stop()


def test_two_workers_on_an_object_store_keep_one_active_version(
    s3_store: S3Target, tmp_path: Path
) -> None:
    """Two worker processes' worth of `Memory` on one bucket (each with its own lease manager
    and Tantivy replica), correcting one memory from two threads each."""
    options = s3_store.storage_options
    workers = [
        open_memory(s3_store.uri, options, str(tmp_path / name), lease_wait_s=60.0)
        for name in ("w1", "w2")
    ]
    try:
        memory_id = _seed(workers[0])
        workers[1].refresh()
        failures: list[str] = []
        seen: list[int] = []

        def correct(n: int) -> None:
            mem, rnd = workers[n % 2], random.Random(n)
            for i in range(3):
                action = rnd.choice(["update", "delete", "restore"])
                try:
                    if action == "update":
                        mem.update(
                            memory_id, f"Ann has a beagle named Biscuit {n}.{i}", user_id=USER
                        )
                    elif action == "delete":
                        mem.delete(memory_id, user_id=USER)
                    else:
                        versions = mem.history(memory_id, user_id=USER)
                        mem.restore(rnd.choice(versions).id, user_id=USER)
                except VersionConflictError:
                    pass
                except Exception as exc:  # anything else fails the test
                    failures.append(f"{action}: {type(exc).__name__}: {exc}")
                seen.append(len(_active(mem, memory_id)))

        threads = [threading.Thread(target=correct, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert max(seen) <= 1, seen
        assert failures == []
        for mem in workers:
            mem.refresh()
            active = _active(mem, memory_id)
            assert len(active) <= 1
            assert _listed(mem, memory_id) == len(active) and _found(mem, memory_id) <= 1
    finally:
        for mem in workers:
            mem.close()
