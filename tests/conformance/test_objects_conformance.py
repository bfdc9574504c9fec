"""One suite for every `Objects`: the in-memory twin and obstore on a real S3 server (moto).

There is no file:// parameter: obstore's LocalStore cannot replace conditionally
(`PutMode::Update` is not implemented), so `RemoteObjects` refuses file:// with a ConfigError,
which the last test pins down; a file:// store URI opens a local folder instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hymem.core.errors import ConfigError, UserInputError
from hymem.indexes.objects.objects import MemoryObjects, Objects
from hymem.indexes.objects.obstore import RemoteObjects


@pytest.fixture(params=["memory", pytest.param("s3", marks=pytest.mark.integration)])
def objects(request: pytest.FixtureRequest) -> Objects:
    if request.param == "memory":
        return MemoryObjects()
    target = request.getfixturevalue("s3_store")
    return RemoteObjects(target.uri, target.storage_options)


def test_create_then_get(objects: Objects) -> None:
    etag = objects.create("a/one.json", b'{"n": 1}')
    assert etag
    stored = objects.get("a/one.json")
    assert stored is not None
    assert (stored.data, stored.etag) == (b'{"n": 1}', etag)


def test_create_conflict_leaves_the_first(objects: Objects) -> None:
    assert objects.create("k.json", b"first")
    assert objects.create("k.json", b"second") is None
    assert objects.get("k.json").data == b"first"  # type: ignore[union-attr]


def test_replace_with_current_etag(objects: Objects) -> None:
    etag = objects.create("k.json", b"v1")
    assert etag is not None
    new = objects.replace("k.json", b"v2", etag)
    assert new and new != etag
    assert objects.get("k.json") is not None
    assert objects.get("k.json").etag == new  # type: ignore[union-attr]


def test_replace_with_stale_etag_is_refused(objects: Objects) -> None:
    old = objects.create("k.json", b"v1")
    assert old is not None
    assert objects.replace("k.json", b"v2", old)
    assert objects.replace("k.json", b"v3", old) is None
    assert objects.get("k.json").data == b"v2"  # type: ignore[union-attr]


def test_replace_missing_key_is_refused(objects: Objects) -> None:
    etag = objects.create("k.json", b"v1")
    assert etag is not None
    assert objects.replace("other.json", b"v2", etag) is None
    assert objects.get("other.json") is None


def test_replace_after_delete_is_refused(objects: Objects) -> None:
    etag = objects.create("k.json", b"v1")
    assert etag is not None
    objects.delete("k.json")
    assert objects.replace("k.json", b"v2", etag) is None


def test_get_missing_and_delete_missing(objects: Objects) -> None:
    assert objects.get("nothing/here.json") is None
    objects.delete("nothing/here.json")


def test_put_is_unconditional(objects: Objects) -> None:
    first = objects.put("k.json", b"v1")
    second = objects.put("k.json", b"v2")
    assert objects.get("k.json") is not None
    assert objects.get("k.json").etag == second != first  # type: ignore[union-attr]


def test_delete_removes(objects: Objects) -> None:
    objects.put("k.json", b"v1")
    objects.delete("k.json")
    assert objects.get("k.json") is None
    assert objects.list("") == []


def test_list_with_prefix(objects: Objects) -> None:
    for key in ["_hymem/leases/b.json", "_hymem/leases/a.json", "_hymem/other.json", "top.json"]:
        objects.put(key, b"{}")
    assert objects.list("_hymem/leases/") == ["_hymem/leases/a.json", "_hymem/leases/b.json"]
    assert objects.list("_hymem/") == [
        "_hymem/leases/a.json",
        "_hymem/leases/b.json",
        "_hymem/other.json",
    ]
    assert objects.list("_hymem/o") == ["_hymem/other.json"]  # a string prefix, not a folder
    assert objects.list("") == sorted([*objects.list("_hymem/"), "top.json"])
    assert objects.list("missing/") == []


def test_binary_data_round_trips(objects: Objects) -> None:
    data = bytes(range(256)) * 4
    objects.create("bin/blob", data)
    assert objects.get("bin/blob").data == data  # type: ignore[union-attr]


@pytest.mark.parametrize("key", ["", "/abs.json", "a//b", "a/../b", "./a"])
def test_invalid_keys_are_refused(objects: Objects, key: str) -> None:
    with pytest.raises(UserInputError):
        objects.put(key, b"x")


def _race(n: int, attempt: Callable[[int], str | None]) -> list[str | None]:
    """Run `attempt(i)` for i in range(n) on n threads released together."""
    barrier = threading.Barrier(n)
    results: list[str | None] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        results[i] = attempt(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_concurrent_create_has_one_winner(objects: Objects) -> None:
    results = _race(8, lambda i: objects.create("race.json", f"writer {i}".encode()))
    winners = [i for i, r in enumerate(results) if r is not None]
    assert len(winners) == 1
    assert objects.get("race.json").data == f"writer {winners[0]}".encode()  # type: ignore[union-attr]


def test_concurrent_replace_has_one_winner(objects: Objects) -> None:
    etag = objects.create("race.json", b"base")
    assert etag is not None
    results = _race(8, lambda i: objects.replace("race.json", f"writer {i}".encode(), etag))
    winners = [i for i, r in enumerate(results) if r is not None]
    assert len(winners) == 1
    assert objects.get("race.json").data == f"writer {winners[0]}".encode()  # type: ignore[union-attr]


def test_file_roots_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="conditional"):
        RemoteObjects(tmp_path.as_uri(), {})
