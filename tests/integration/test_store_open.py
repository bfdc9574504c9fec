"""Opening, metadata, locking, read-only use and closing of a real store folder."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hymem.core.errors import (
    EmbedderMismatchError,
    ReadOnlyStoreError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
    StoreLockedError,
)
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.lance.schema import SCHEMA_VERSION
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.store import Store

from tests.fixtures_store import commit_texts, make_turns, open_store

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_new_store_records_schema_and_embedder(make_store: Callable[..., Store]) -> None:
    store = make_store()
    meta = json.loads((store.path / "meta.json").read_text())
    assert meta["schema_version"] == SCHEMA_VERSION
    assert (meta["embedder"], meta["dim"]) == ("hashing-64", 64)
    assert store.meta()["embedder"] == "hashing-64"
    rows = store.tables.rows("meta", None)
    assert {r["key"]: r["value"] for r in rows}["schema_version"] == str(SCHEMA_VERSION)
    assert sorted(store.tables.names()) == ["meta", "segments", "summaries", "traces", "turns"]
    assert store.counts() == {
        "turns": 0,
        "pending_turns": 0,
        "segments": 0,
        "summaries": 0,
        "active_summaries": 0,
        "traces": 0,
    }


def test_other_embedder_is_refused_naming_both(tmp_path: Path) -> None:
    open_store(tmp_path / "m", HashingEmbedder(64)).close()
    with pytest.raises(EmbedderMismatchError, match=r"hashing-64.*hashing-128"):
        open_store(tmp_path / "m", HashingEmbedder(128))
    # the failed open released the lock: the right embedder still opens
    open_store(tmp_path / "m", HashingEmbedder(64)).close()


def test_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    open_store(tmp_path / "m", HashingEmbedder(64)).close()
    meta_path = tmp_path / "m" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["schema_version"] = 999
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(SchemaVersionError, match="999"):
        open_store(tmp_path / "m", HashingEmbedder(64))


def test_second_writer_in_the_same_process_is_refused(make_store: Callable[..., Store]) -> None:
    make_store()
    with pytest.raises(StoreLockedError):
        make_store()
    reader = make_store(read_only=True)  # readers are fine while the writer holds the lock
    assert reader.counts()["turns"] == 0


def test_a_store_closed_on_another_thread_releases_its_lock(tmp_path: Path) -> None:
    """The writer lock belongs to the store, not to the thread that opened it: a server (or
    AsyncMemory) that opens on one thread and closes on another must free the folder."""
    import threading

    folder = tmp_path / "m"
    store = open_store(folder, HashingEmbedder(64))
    with pytest.raises(StoreLockedError):  # the lock is really held while the store is open
        open_store(folder, HashingEmbedder(64))
    errors: list[BaseException] = []

    def close() -> None:
        try:
            store.close()
        except BaseException as exc:  # a thread's exception would otherwise only be printed
            errors.append(exc)

    closer = threading.Thread(target=close)
    closer.start()
    closer.join()
    assert errors == [], "close() on another thread failed"
    with pytest.raises(StoreClosedError):
        store.counts()
    with open_store(folder, HashingEmbedder(64)) as again:  # a writer again, and it writes
        again.append_turns(make_turns("u", 2))
        assert again.counts("u")["turns"] == 2


def test_second_writer_in_another_process_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    open_store(folder, HashingEmbedder(64)).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys
            from hymem.indexes.open import open_store
            from hymem.indexes.store.store import Store
            s = open_store({str(folder)!r}, embedder_name="hashing-64", dim=64)
            print("locked", flush=True)
            sys.stdin.readline()
            s.close()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert holder.stdout is not None
        for line in holder.stdout:  # skip log lines until the holder says it holds the lock
            if line.strip() == "locked":
                break
        with pytest.raises(StoreLockedError, match="another process"):
            open_store(folder, HashingEmbedder(64))
    finally:
        holder.communicate("\n", timeout=60)
    open_store(folder, HashingEmbedder(64)).close()  # released once the holder closed


def test_read_only_rejects_writes_but_reads(
    make_store: Callable[..., Store], hashing_embedder: HashingEmbedder
) -> None:
    writer = make_store()
    commit_texts(writer, hashing_embedder, "u", ["Alice adopted a cat"])
    reader = make_store(read_only=True)
    with pytest.raises(ReadOnlyStoreError):
        reader.append_turns(make_turns("u", 1))
    with pytest.raises(ReadOnlyStoreError):
        reader.write_trace({"trace_id": "x"})
    with pytest.raises(ReadOnlyStoreError):
        reader.reindex()
    assert [i for i, _ in reader.lexical_search(RowScope("u"), "cat", 5)] == ["seg-s0"]
    # the reader sees the writer's later commits
    commit_texts(writer, hashing_embedder, "u", ["Bob has a dog"], segment_id="seg2")
    assert [i for i, _ in reader.lexical_search(RowScope("u"), "dog", 5)] == ["seg2-s0"]
    assert reader.counts("u")["summaries"] == 2


def test_read_only_on_missing_folder_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no hymem memory"):
        open_store(tmp_path / "nothing", HashingEmbedder(64), read_only=True)


def test_use_after_close_is_a_typed_error(tmp_path: Path) -> None:
    with open_store(tmp_path / "m", HashingEmbedder(64)) as store:
        pass
    with pytest.raises(StoreClosedError):
        store.counts()
    store.close()  # idempotent


def test_turns_are_idempotent_per_user(tmp_store: Store) -> None:
    turns = make_turns("alice", 3)
    assert tmp_store.append_turns(turns) == ["t0", "t1", "t2"]
    assert tmp_store.append_turns(turns + make_turns("alice", 4)) == ["t3"]
    # the same turn id for another user is another turn
    assert tmp_store.append_turns(make_turns("bob", 2)) == ["t0", "t1"]
    assert [t.id for t in tmp_store.get_turns("alice")] == ["t0", "t1", "t2", "t3"]
    assert tmp_store.next_seq("alice") == 4 and tmp_store.next_seq("carol") == 0
    assert tmp_store.users() == ["alice", "bob"]
    assert [t.id for t in tmp_store.get_turns("alice", ids=["t2", "t0"])] == ["t0", "t2"]


def test_lost_meta_json_is_restored_from_the_meta_table(tmp_path: Path) -> None:
    open_store(tmp_path / "m", HashingEmbedder(64)).close()
    (tmp_path / "m" / "meta.json").unlink()
    with pytest.raises(EmbedderMismatchError):
        open_store(tmp_path / "m", HashingEmbedder(32))
    with open_store(tmp_path / "m", HashingEmbedder(64)) as store:
        assert store.meta()["dim"] == 64 and store.meta()["schema_version"] == SCHEMA_VERSION
