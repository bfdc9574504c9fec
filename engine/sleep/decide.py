"""The decision half of a sleep: one user's snapshot and its queues, triage against the journal,
and the bounded-parallel runner that asks `roles.update` and journals each finished decision.

The runner does not use `hymem.llm.pool.map_concurrent`: that helper returns only when every
item has finished, and a sleep must journal each decision the moment it completes so that a kill
loses nothing finished.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from hymem.core.config import MemoryConfig
from hymem.core.errors import LLMOutputError, LLMUnavailable
from hymem.core.logging import get_logger
from hymem.core.time import Clock, to_utc_or_none, utcnow
from hymem.core.types import StatusChange, SummaryRecord, SummaryStatus, Usage
from hymem.llm.cache import cache_owner
from hymem.llm.roles import ContextItem, RoleResult, Roles, UpdateOutput
from hymem.sleep.journal import JournalEntry, SleepJournal, queue_key
from hymem.sleep.metadata_groups import metadata_queues
from hymem.sleep.plan import ancestors, root_of
from hymem.sleep.ports import SleepStore
from hymem.sleep.queues import DEFAULT_BLOCK_BYTES, QueueCost, build_update_queues, temporal_ranks
from hymem.write.decisions import Decision, normalise_decision

log = get_logger("hymem.sleep.decide")

# Calls submitted ahead per worker: one queued behind each running call keeps every worker busy
# when a call returns, while a kill loses at most this many unjournaled calls per worker.
IN_FLIGHT_PER_WORKER = 2


@dataclass(frozen=True)
class Ask:
    """One decision to ask the model for."""

    user_id: str
    target: SummaryRecord
    queue: list[SummaryRecord]
    key: str
    watermark: datetime | None


@dataclass
class Snapshot:
    """One user's summaries as a sleep sees them, with every active summary's update queue."""

    user_id: str
    records: dict[str, SummaryRecord]  # every status, without vectors
    actives: list[SummaryRecord]  # with vectors, in queue index order
    queues: list[list[int]]  # indices into actives, most similar first
    cost: QueueCost
    repair_changes: list[StatusChange] = field(default_factory=list)

    @property
    def watermark(self) -> datetime | None:
        """Newest creation time of a write-path summary in the snapshot: summaries created
        later are news to every decision made now. Only first versions count, since items are
        compared by their first version's creation time (one clock: the write path's)."""
        firsts = (r for r in self.records.values() if r.previous_id is None)
        times = [to_utc_or_none(r.created_at) for r in firsts]
        return max((t for t in times if t is not None), default=None)

    def repairs(self) -> list[StatusChange]:
        return self.repair_changes

    def triage(self, journal: SleepJournal, backend: str) -> tuple[list[Ask], list[Decision], int]:
        """Split the non-empty queues into (to ask, replayed from the journal, settled count).

        Replayed: a decision on identical inputs exists (a resumed or repeated sleep). Settled:
        the target or a version it descends from was decided on a snapshot that already held
        every summary now in its queue (by the creation time of each item's first version), so
        asking again would only re-ask about old news.
        """
        asks: list[Ask] = []
        replayed: list[Decision] = []
        settled = 0
        mark = self.watermark
        root_time: dict[str, datetime | None] = {}
        for i, queue in enumerate(self.queues):
            if not queue:
                continue
            target = self.actives[i]
            items = [self.actives[j] for j in queue]
            key = queue_key(
                self.user_id, target.id, target.text, [(x.id, x.text) for x in items], backend
            )
            entry = journal.lookup(key)
            if entry is not None:
                replayed.append(
                    Decision(
                        target.id,
                        entry.action,
                        entry.text,
                        entry.evidence_id,
                        entry.reason,
                        entry.rejected,
                    )
                )
                continue
            seen = journal.watermark(ancestors(target.id, self.records))
            if seen is not None and all(
                (rt := self._root_time(x.id, root_time)) is not None and rt <= seen for x in items
            ):
                settled += 1
                continue
            asks.append(Ask(self.user_id, target, items, key, mark))
        return asks, replayed, settled

    def _root_time(self, sid: str, cache: dict[str, datetime | None]) -> datetime | None:
        if sid not in cache:
            cache[sid] = to_utc_or_none(root_of(sid, self.records).created_at)
        return cache[sid]


def build_snapshot(
    store: SleepStore, user_id: str, config: MemoryConfig, *, block_bytes: int | None = None
) -> Snapshot:
    """Load one user's summaries, note repairs, order them in time and build the queues."""
    records = {r.id: r for r in store.get_summaries(user_id, statuses=None, with_vectors=False)}
    repairs = _repair_half_applied(records)
    actives = [
        r
        for r in store.get_summaries(user_id, with_vectors=True)
        if r.id in records and records[r.id].status == SummaryStatus.ACTIVE and r.vector is not None
    ]
    as_lists, cost = metadata_queues(
        actives,
        lambda group: build_update_queues(
            _vector_matrix(group),
            temporal_ranks([_time_key(r, records) for r in group]),
            top_k=config.sleep_top_k,
            keep_n=config.sleep_keep_n,
            floor=config.sleep_similarity_floor,
            exact_below=config.sleep_exact_below,  # method auto: exact for small users
            block_bytes=block_bytes or DEFAULT_BLOCK_BYTES,
        ),
    )
    return Snapshot(user_id, records, actives, as_lists, cost, repairs)


def _repair_half_applied(records: dict[str, SummaryRecord]) -> list[StatusChange]:
    """The retirements a crash between inserting a version and retiring its predecessor left
    undone (both still active). `records` is updated as if they were applied, so the queues
    are built over the repaired state."""
    repairs: list[StatusChange] = []
    for r in sorted(records.values(), key=lambda r: r.id):
        prev = records.get(r.previous_id) if r.previous_id else None
        if prev is None or not (r.status == prev.status == SummaryStatus.ACTIVE):
            continue
        repairs.append(
            StatusChange(
                summary_id=prev.id,
                status=SummaryStatus.SUPERSEDED,
                superseded_by=r.id,
                reason="consolidated",
                evidence_id=r.evidence_id,
            )
        )
        records[prev.id] = prev.model_copy(
            update={"status": SummaryStatus.SUPERSEDED, "superseded_by": r.id}
        )
    return repairs


def _time_key(r: SummaryRecord, records: Mapping[str, SummaryRecord]) -> tuple[object, ...]:
    """Where a summary falls in time for the queues: undated ones first, then by start, by
    when its lineage began, and by version, with ids breaking ties deterministically."""
    root = root_of(r.id, records)
    start = to_utc_or_none(r.time_start)
    return (
        start is not None,
        start or datetime.min,
        to_utc_or_none(root.created_at),
        root.id,
        r.version,
        r.id,
    )


def _vector_matrix(actives: list[SummaryRecord]) -> np.ndarray:
    if not actives:
        return np.zeros((0, 1), dtype=np.float32)
    return np.asarray([r.vector for r in actives], dtype=np.float32)


class DecisionRunner:
    """Asks `roles.update` for each Ask with at most `workers` calls in flight, journaling each
    finished decision at once (fsync'd) unless `record` is False (dry runs)."""

    def __init__(
        self, roles: Roles, journal: SleepJournal, *, record: bool = True, clock: Clock = utcnow
    ) -> None:
        self._roles = roles
        self._journal = journal
        self._record = record
        self._clock = clock
        self.asked = 0
        self.failed = 0
        self.usage = Usage()

    def _call(self, ask: Ask) -> RoleResult[UpdateOutput]:
        with cache_owner(ask.user_id):  # a cached reply is erased with its user
            return self._roles.update(_item(ask.target), [_item(x) for x in ask.queue])

    def run(
        self,
        asks: Sequence[Ask],
        workers: int,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> Generator[tuple[Ask, Decision], None, None]:
        """Each finished (ask, decision) as it is journaled; close() (or exhausting it) shuts
        the pool down, waiting for calls in flight and cancelling the rest."""
        if not asks:
            return
        total, done_n = len(asks), 0
        todo = iter(asks)
        pending: dict[Future[RoleResult[UpdateOutput]], Ask] = {}
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hymem-sleep")
        try:
            while True:
                in_flight = IN_FLIGHT_PER_WORKER * workers
                while len(pending) < in_flight and (ask := next(todo, None)) is not None:
                    pending[pool.submit(contextvars.copy_context().run, self._call, ask)] = ask
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                batch: list[tuple[Ask, Decision]] = []
                fatal: BaseException | None = None
                for fut in finished:
                    ask = pending.pop(fut)
                    try:
                        decision = self._settle(ask, fut)
                    except BaseException as exc:  # journal the rest of the batch, then raise
                        fatal = fatal or exc
                        continue
                    if decision is not None:
                        batch.append((ask, decision))
                if self._record:
                    at = self._clock()
                    self._journal.append([_entry(a, d, self._roles.label, at) for a, d in batch])
                if fatal is not None:
                    raise fatal
                done_n += len(finished)
                if progress:
                    progress("decisions", done_n, total)
                yield from batch
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _settle(self, ask: Ask, fut: Future[RoleResult[UpdateOutput]]) -> Decision | None:
        """The decision of a finished call; None when the model failed (asked again next time).
        Auth and request errors propagate: no later call would fare better."""
        try:
            result = fut.result()
        except (LLMUnavailable, LLMOutputError) as exc:
            self.failed += 1
            log.warning("sleep.decision_failed", target_id=ask.target.id, error=str(exc))
            return None
        self.asked += 1
        self.usage.add("update", result.usage)
        if result.fallback:
            self.failed += 1
            log.warning(
                "sleep.decision_fallback", target_id=ask.target.id, reason=result.fallback_reason
            )
            return None
        out = result.output
        return normalise_decision(
            ask.target, ask.queue, out.action, out.text, out.evidence_id, out.reason
        )


def _item(r: SummaryRecord) -> ContextItem:
    return ContextItem(id=r.id, text=r.text, time_start=r.time_start, time_end=r.time_end)


def _entry(ask: Ask, d: Decision, backend: str, at: datetime) -> JournalEntry:
    return JournalEntry(
        user_id=ask.user_id,
        target_id=ask.target.id,
        key=ask.key,
        action=d.action,
        text=d.text,
        evidence_id=d.evidence_id,
        reason=d.reason,
        rejected=d.rejected,
        queue_ids=[x.id for x in ask.queue],
        watermark=ask.watermark,
        backend=backend,
        at=at,
    )
