"""Records and the kit a conformance suite is run with: plain builders, no store of hymem's.

`StorageKit` is what a store under test hands the suites (`hymem.testing`); the builders make
turns, segments and summaries whose vectors are the `HashingEmbedder(dim=DIM)`'s, so a store
under test is opened with `dim=DIM`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hymem.core.types import SegmentRecord, SummaryRecord, SummaryStatus, TurnRecord
from hymem.embed.embedders import Embedder, HashingEmbedder
from hymem.indexes.ports import Storage

BASE_TIME = datetime(2023, 5, 8, 13, 56)
DIM = 64  # the hashing embedder's dimension, used by every store fixture
EVIL = "x' OR '1'='1"
_HASHING = HashingEmbedder(dim=DIM)


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
    store: Storage,
    embedder: Embedder,
    user_id: str,
    texts: Sequence[str],
    **kwargs: Any,
) -> tuple[SegmentRecord, list[SummaryRecord]]:
    """Commit one segment with one summary per text; returns what was written."""
    segment, summaries = make_records(embedder, user_id, texts, **kwargs)
    store.commit_segments(user_id, [segment], summaries, list(segment.turn_ids))
    return segment, summaries


def text_vector(text: str) -> list[float]:
    """The vector `make_summary` gives a summary of `text` (the hashing embedder's)."""
    return [float(x) for x in _HASHING.embed([text])[0]]


def vec(*head: float) -> list[float]:
    """A DIM-d vector with the given leading components: cosine geometry made by hand."""
    return [*head, *([0.0] * (DIM - len(head)))]


def make_segment(
    user_id: str,
    id_: str,
    text: str | None = None,
    *,
    turn_ids: Sequence[str] = (),
    start: datetime | None = BASE_TIME,
    end: datetime | None = None,
    vector: list[float] | None = None,
) -> SegmentRecord:
    """One segment; its vector embeds its text with the hashing embedder unless given."""
    text = text if text is not None else f"raw dialogue of {id_}"
    return SegmentRecord(
        id=id_,
        user_id=user_id,
        session_ids=["s1"],
        turn_ids=list(turn_ids),
        text=text,
        time_start=start,
        time_end=end,
        token_count=len(text.split()),
        vector=vector if vector is not None else _HASHING.embed([text])[0].tolist(),
        created_at=BASE_TIME,
    )


def make_summary(
    user_id: str,
    id_: str,
    text: str,
    *,
    segment_id: str = "seg",
    start: datetime | None = BASE_TIME,
    end: datetime | None = None,
    created: datetime = BASE_TIME,
    vector: list[float] | None = None,
    **fields: object,
) -> SummaryRecord:
    """One active summary; its vector embeds its text unless given; `fields` override."""
    return SummaryRecord.model_validate(
        {
            "id": id_,
            "user_id": user_id,
            "segment_id": segment_id,
            "text": text,
            "vector": vector if vector is not None else _HASHING.embed([text])[0].tolist(),
            "time_start": start,
            "time_end": end,
            "status": SummaryStatus.ACTIVE,
            "created_at": created,
            "updated_at": created,
            **fields,
        }
    )


@dataclass
class StorageKit:
    """One store under test, its embedder, and an opener for read-only handles on its data."""

    kind: str
    store: Storage
    embedder: HashingEmbedder
    open_reader: Callable[[], Storage]


__all__ = [
    "BASE_TIME",
    "DIM",
    "EVIL",
    "StorageKit",
    "commit_texts",
    "make_records",
    "make_segment",
    "make_summary",
    "make_turns",
    "text_vector",
    "vec",
]
