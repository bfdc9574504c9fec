"""Fixtures and builders for the sleep tests.

* `summary(...)`: a SummaryRecord with sensible defaults.
* `summary_store(records)`: the real `InMemoryStore` (recording its calls) holding the given
  summaries, for the unit tests of the sleep flow.
* `seed_store(store, user_id, texts)`: writes segments + summaries with `commit_segments`, for
  integration tests that must not depend on the write path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest
from hymem.core.types import SegmentRecord, SummaryRecord
from hymem.embed.embedders import Embedder, HashingEmbedder
from hymem.indexes.ports import Storage

from tests.fixtures_store import RecordingStore

T0 = datetime(2023, 5, 1, 9, 0)
CREATED = datetime(2026, 1, 1, 12, 0)


def summary(
    sid: str,
    text: str,
    *,
    user_id: str = "u1",
    day: int = 0,
    created: int = 0,
    **kw: Any,
) -> SummaryRecord:
    """A summary dated T0 + `day` days and created CREATED + `created` seconds."""
    ts = T0 + timedelta(days=day)
    base: dict[str, Any] = dict(
        id=sid,
        user_id=user_id,
        segment_id=f"seg-{sid}",
        text=text,
        time_start=ts,
        time_end=ts,
        created_at=CREATED + timedelta(seconds=created),
        updated_at=CREATED + timedelta(seconds=created),
    )
    base.update(kw)
    return SummaryRecord(**base)


def summary_store(records: Sequence[SummaryRecord]) -> RecordingStore:
    """The real in-memory store (HashingEmbedder's dimension) holding `records` as committed
    summaries, each user's in one commit; `applied` starts empty."""
    embedder = HashingEmbedder()  # the Consolidator re-embeds merged versions with it
    store = RecordingStore(embedder.dim, embedder_name=embedder.name)
    for user_id in sorted({r.user_id for r in records}):
        store.commit_segments(user_id, [], [r for r in records if r.user_id == user_id], [])
    return store


def seed_store(
    store: Storage, embedder: Embedder, user_id: str, texts: Sequence[str], *, prefix: str = "s"
) -> list[SummaryRecord]:
    """Write one segment and one summary per text (day i) through `store.commit_segments`."""
    segments, sums = [], []
    vecs = embedder.embed(list(texts))
    for i, text in enumerate(texts):
        ts = T0 + timedelta(days=i)
        seg_id = f"{user_id}-{prefix}seg{i}"
        segments.append(
            SegmentRecord(
                id=seg_id,
                user_id=user_id,
                session_ids=["s1"],
                turn_ids=[],
                text=f"[{ts}] A: {text}",
                time_start=ts,
                time_end=ts,
                token_count=len(text.split()),
                vector=np.asarray(vecs[i]).tolist(),
                created_at=CREATED,
            )
        )
        sums.append(
            SummaryRecord(
                id=f"{user_id}-{prefix}{i}",
                user_id=user_id,
                segment_id=seg_id,
                text=text,
                vector=np.asarray(vecs[i]).tolist(),
                time_start=ts,
                time_end=ts,
                created_at=CREATED + timedelta(seconds=i),
                updated_at=CREATED + timedelta(seconds=i),
            )
        )
    store.commit_segments(user_id, segments, sums, [])
    return sums


# --- integration helpers --------------------------------------------------------------------


@pytest.fixture(scope="session")
def sleep_minilm() -> Any:
    """One real MiniLM per test session (loading it costs seconds on these machines)."""
    from hymem.embed.embedders import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def target_text(body: dict[str, Any]) -> str:
    """The target memory's text in an update request ("[id] (dates) text" inside <target>)."""
    content = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    block = content.split("<target>", 1)[1].split("</target>", 1)[0].strip()
    return block.split(") ", 1)[1] if ") " in block else block


def newer_ids(body: dict[str, Any]) -> list[str]:
    """The ids shown in an update request's <newer_memories> block, in order."""
    content = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    block = content.split("<newer_memories>", 1)[1].split("</newer_memories>", 1)[0]
    return re.findall(r"\[([^\]\s]+)\]", block)


def scripted_update(
    rules: dict[str, Callable[[list[str]], dict[str, Any]]],
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A server reply: the rule whose key occurs in the target's text decides; else ignore."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        text, ids = target_text(body), newer_ids(body)
        for needle, rule in rules.items():
            if needle in text:
                return rule(ids)
        return {"action": "ignore", "text": None, "evidence_id": None, "reason": "unrelated"}

    return reply
