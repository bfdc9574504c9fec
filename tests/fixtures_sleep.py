"""Fixtures and builders for the sleep tests.

* `summary(...)`: a SummaryRecord with sensible defaults.
* `summary_store(records)`: the real `InMemoryStore` (recording its calls) holding the given
  summaries, for the unit tests of the sleep flow.
* `ScriptedRoles`: an in-process Roles whose update decisions come from a function, with a
  fixed latency per call and a record of every call (the benchmark uses it too).
* `seed_store(store, user_id, texts)`: writes segments + summaries with `commit_segments`, for
  integration tests that must not depend on the write path.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest
from hymem.config import MemoryConfig
from hymem.embedders import Embedder, HashingEmbedder
from hymem.indexes.protocol import Storage
from hymem.llm.roles import ContextItem, Role, RoleResult, UpdateOutput
from hymem.types import RoleUsage, SegmentRecord, SummaryRecord

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


UpdateFn = Callable[[ContextItem, list[ContextItem]], dict[str, Any] | UpdateOutput]


class ScriptedRoles:
    """Roles whose `update` answers come from `decide(target, newer)`; other roles are unused
    by sleep. Thread-safe; records calls; sleeps `latency_s` per call like a remote model."""

    def __init__(
        self, decide: UpdateFn | None = None, *, latency_s: float = 0.0, label: str = "scripted"
    ) -> None:
        self.label = label
        self._decide = decide or (lambda t, n: {"action": "ignore"})
        self.latency_s = latency_s
        self.calls: list[tuple[str, list[str]]] = []
        self._lock = threading.Lock()
        self._usage = RoleUsage()

    def update(self, target: ContextItem, newer: list[ContextItem]) -> RoleResult[UpdateOutput]:
        if self.latency_s:
            time.sleep(self.latency_s)
        out = self._decide(target, newer)
        output = out if isinstance(out, UpdateOutput) else UpdateOutput(**out)
        usage = RoleUsage(calls=1, prompt_tokens=10 * (1 + len(newer)), completion_tokens=5)
        with self._lock:
            self.calls.append((target.id, [n.id for n in newer]))
            self._usage = self._usage + usage
        return RoleResult(role=Role.UPDATE, output=output, usage=usage, prompt_version="update@t")

    def cumulative_usage(self) -> dict[str, RoleUsage]:
        with self._lock:
            return {"update": self._usage}

    def close(self) -> None:
        return None


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
    from hymem.embedders import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def scripted_config(server: Any, **overrides: Any) -> MemoryConfig:
    """A config whose roles talk to the scripted server, with fast retries."""
    settings: dict[str, Any] = {
        "llm": "openai:test-model",
        "llm_base_url": server.base_url,
        "llm_api_key": "test-key",
        "llm_timeout_s": 10.0,
        "llm_max_retries": 1,
        "sleep_similarity_floor": 0.4,
    }
    settings.update(overrides)
    return MemoryConfig.defaults(**settings)


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
