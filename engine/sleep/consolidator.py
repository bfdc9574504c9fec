"""Sleep-time consolidation of the summary tier (LightMem §3.3; ARCHITECTURE §6).

One sleep, per user: repair a half-applied previous sleep, snapshot the active summaries, build
every update queue (similarity only: `hymem.sleep.queues`), take each queue's decision from the
journal or ask `roles.update` (in parallel, bounded), then apply every decision of the snapshot at
once as versions (`hymem.sleep.plan`): new versions are inserted before old ones are retired, so a
concurrent reader always finds one of them.

Decisions are journaled as they finish (`hymem.sleep.journal`) but applied only at the end, from
the same snapshot: a sleep killed half-way leaves the store untouched and the next sleep, seeing
the same snapshot, replays the journaled decisions and asks only the rest, ending in exactly the
state one uninterrupted run would have reached.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager

import numpy as np
from hymem.core.config import MemoryConfig
from hymem.core.errors import NotFoundError, ReadOnlyStoreError, UserInputError
from hymem.core.logging import get_logger
from hymem.core.time import Clock, utcnow
from hymem.core.types import SummaryRecord, SummaryStatus, Usage
from hymem.embed.embedders import Embedder
from hymem.llm.roles import Roles, RolesProvider
from hymem.sleep.decide import Ask, DecisionRunner, Snapshot, build_snapshot
from hymem.sleep.fact_pass import FactPassReport, fact_pass
from hymem.sleep.journal import JournalEntry, SleepJournal
from hymem.sleep.plan import PlannedChange, plan_changes, with_vectors
from hymem.sleep.ports import SleepStore
from hymem.sleep.restore import restore_version
from hymem.sleep.resummarise import ResummariseReport, resummarise_pass
from hymem.write.decisions import Decision
from hymem.write.guard import WriteGuard
from pydantic import BaseModel, Field

log = get_logger("hymem.sleep.consolidator")

Progress = Callable[[str, int, int], None]  # (phase, done, total)


class SleepReport(BaseModel):
    """What one sleep looked at, decided, cost and changed: `Memory.sleep()`'s result.

    `decisions` counts the model's verdicts by kind; `new_versions`, `superseded` and `deleted`
    are what was applied (nothing on a dry run, where `planned` lists the changes instead);
    `usage` and the token fields are the model cost; a second sleep over unchanged data reports
    no changes (its decisions come from the journal: `skipped_from_journal`, `settled`)."""

    users: list[str] = Field(default_factory=list)
    summaries_scanned: int = 0
    queues_built: int = 0  # non-empty update queues
    queue_entries: int = 0
    similarities: int = 0  # similarity values computed to build the queues
    queue_seconds: float = 0.0
    approximate_queue_users: int = 0  # users with sleep_exact_below or more: IVF queues
    decisions: dict[str, int] = Field(
        default_factory=lambda: {"update": 0, "delete": 0, "ignore": 0, "rejected": 0}
    )
    asked: int = 0  # decisions asked of the model in this run
    skipped_from_journal: int = 0  # identical inputs already decided: not asked again
    settled: int = 0  # later versions whose queue holds nothing new since their last decision
    failed: int = 0  # model failures or fallbacks: nothing changed, asked again next sleep
    deferred: int = 0  # users another worker wrote between survey and apply: next sleep
    repaired: int = 0  # half-applied changes of an interrupted earlier sleep, completed
    # The fact pass (`hymem.sleep.fact_pass`), before the model's: keys read for summaries
    # that had none, duplicates of one fact merged, older values ended, ended rows retired.
    facts: FactPassReport = Field(default_factory=FactPassReport)
    # The re-summarise pass (`hymem.sleep.resummarise`), first: segments whose summaries the
    # extractive summariser wrote when the model failed, summarised by the model again.
    resummarised: ResummariseReport = Field(default_factory=ResummariseReport)
    new_versions: int = 0
    superseded: int = 0
    deleted: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0
    dry_run: bool = False
    backend: str = ""
    planned: list[PlannedChange] = Field(default_factory=list)  # filled on dry runs


class Consolidator:
    """Built once per Memory (`mem.sleep`, `mem.history`, `mem.restore` delegate here).

    Takes what a sleep touches: the store (summaries in, versions out), the embedder (vectors
    of new versions), the roles (`update` decisions, resolved on the first sleep), the config
    (queue sizes, workers), the journal, a clock for version and journal times, and the
    store's `WriteGuard` (its own by default): sleep and restore hold its versions lock and
    each user's right to write, and a stale user's journal rows are reloaded through it."""

    def __init__(
        self,
        store: SleepStore,
        embedder: Embedder,
        roles: RolesProvider,
        config: MemoryConfig,
        *,
        journal: SleepJournal,
        clock: Clock = utcnow,
        block_bytes: int | None = None,
        guard: WriteGuard | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._roles = roles
        self._config = config
        self._journal = journal
        self._clock = clock
        self._block_bytes = block_bytes
        # One sleep, restore or correction at a time: the Memory shares the guard with its
        # Editor and Ingestor. Another worker's writes make this process's journal rows stale.
        self._guard = guard or WriteGuard(store)
        self._guard.on_stale(journal.reload_user)

    @property
    def journal(self) -> SleepJournal:
        return self._journal

    def close(self) -> None:
        self._journal.close()

    # --- sleep ----------------------------------------------------------------------------
    def sleep(
        self,
        *,
        user_id: str | None = None,
        max_workers: int | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> SleepReport:
        store = self._store
        if store.read_only and not dry_run:
            raise ReadOnlyStoreError(
                "sleep writes new versions: open the memory for writing (or pass dry_run=True)"
            )
        workers = self._config.sleep_workers if max_workers is None else max_workers
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise UserInputError("max_workers must be >= 1")
        started = time.perf_counter()
        with self._guard.versions_lock:
            roles = self._roles()
            report = SleepReport(dry_run=dry_run, backend=roles.label)
            users = [user_id] if user_id is not None else store.users()
            snaps: dict[str, Snapshot] = {}
            asks: list[Ask] = []
            found: dict[str, list[Decision]] = {}
            for uid in users:
                with self._user(uid, dry_run):
                    self._resummarise(uid, roles, report, dry_run)
                    done = fact_pass(
                        store,
                        uid,
                        self._clock,
                        decide_facts=roles.label == "extractive",
                        dry_run=dry_run,
                    )
                    for name, value in done.model_dump().items():
                        setattr(report.facts, name, getattr(report.facts, name) + value)
                    survey = self._survey(uid, roles.label, report, dry_run)
                snaps[uid], user_asks, found[uid] = survey
                asks.extend(user_asks)
                if progress:
                    progress("queues", len(snaps), len(users))
            log.info(
                "sleep.queues",
                users=len(users),
                queues=report.queues_built,
                seconds=round(report.queue_seconds, 3),
                to_ask=len(asks),
            )
            runner = DecisionRunner(roles, self._journal, record=not dry_run, clock=self._clock)
            with closing(runner.run(asks, workers, progress)) as decided:
                for ask, decision in decided:
                    found[ask.user_id].append(decision)
            _count_calls(report, runner)
            for n, uid in enumerate(users, 1):
                with self._user(uid, dry_run) as stale:
                    if stale:  # written elsewhere since the survey: decided again next sleep
                        report.deferred += 1
                        log.info("sleep.deferred", user_id=uid)
                    else:
                        self._apply(snaps[uid], found[uid], report, dry_run)
                if progress:
                    progress("apply", n, len(users))
        report.seconds = time.perf_counter() - started
        log.info("sleep.done", **report.model_dump(exclude={"planned", "usage", "users"}))
        return report

    def _resummarise(self, user_id: str, roles: Roles, report: SleepReport, dry_run: bool) -> None:
        if self._config.summariser == "extractive":  # summaries are the extractive ones by choice
            return
        again = resummarise_pass(self._store, roles, self._embedder.embed, user_id, dry_run=dry_run)
        total = report.resummarised
        for name, value in again.model_dump(exclude={"usage"}).items():
            setattr(total, name, getattr(total, name) + value)
        total.usage = total.usage + again.usage

    @contextmanager
    def _user(self, user_id: str, dry_run: bool) -> Iterator[bool]:
        """Hold the user's lease (an object store) unless nothing is written; True when
        another worker wrote the user since this process last held it (its journal rows
        are reloaded by then: `on_stale`)."""
        if dry_run:
            yield False
            return
        with self._guard.writing(user_id) as stale:
            yield stale

    def _survey(
        self, user_id: str, backend: str, report: SleepReport, dry_run: bool
    ) -> tuple[Snapshot, list[Ask], list[Decision]]:
        """One user's snapshot with its queues and repairs, split into the decisions to ask
        and those replayed from the journal; the report counts what was looked at."""
        snap = build_snapshot(self._store, user_id, self._config, block_bytes=self._block_bytes)
        report.users.append(user_id)
        self._repair(snap, report, dry_run)
        report.summaries_scanned += snap.cost.items
        report.queues_built += snap.cost.queues
        report.queue_entries += snap.cost.entries
        report.similarities += snap.cost.similarities
        report.queue_seconds += snap.cost.seconds
        report.approximate_queue_users += snap.cost.method == "ivf"
        asks, replayed, settled = snap.triage(self._journal, backend)
        report.skipped_from_journal += len(replayed)
        report.settled += settled
        return snap, asks, replayed

    def _repair(self, snap: Snapshot, report: SleepReport, dry_run: bool) -> None:
        """Finish an apply that a crash cut between inserting a version and retiring the old."""
        changes = snap.repairs()
        if not changes:
            return
        report.repaired += len(changes)
        if not dry_run:
            self._store.apply_summary_changes(snap.user_id, [], changes)
        log.info("sleep.repaired", user_id=snap.user_id, changes=len(changes), dry_run=dry_run)

    def _apply(
        self, snap: Snapshot, decisions: list[Decision], report: SleepReport, dry_run: bool
    ) -> None:
        for d in decisions:
            report.decisions[d.kind] = report.decisions.get(d.kind, 0) + 1
        plan = plan_changes(snap.user_id, decisions, snap.records, now=self._clock())
        report.new_versions += len(plan.new)
        report.superseded += sum(c.status == SummaryStatus.SUPERSEDED for c in plan.changes)
        report.deleted += sum(c.status == SummaryStatus.DELETED for c in plan.changes)
        if dry_run:
            report.planned.extend(plan.planned)
            return
        if not plan.changes:
            return
        new = plan.new
        if new:
            vectors = np.asarray(self._embedder.embed([r.text for r in new]))
            new = with_vectors(new, vectors.tolist())
        self._store.apply_summary_changes(snap.user_id, new, plan.changes)
        log.info("sleep.applied", user_id=snap.user_id, new=len(new), changes=len(plan.changes))

    # --- history and rollback -----------------------------------------------------------
    def _records(self, user_id: str) -> dict[str, SummaryRecord]:
        rows = self._store.get_summaries(user_id, statuses=None, with_vectors=False)
        return {r.id: r for r in rows}

    def history(self, summary_id: str, *, user_id: str) -> list[SummaryRecord]:
        """Every version of the memory, oldest first: `summary_id` is its memory id or any
        version's id. Versions share the memory id; a store written before memory ids
        (whose migration filled them from the chain) gives the same versions."""
        records = self._records(user_id)
        memory = summary_id
        if not any(r.memory_id == summary_id for r in records.values()):
            if summary_id not in records:
                raise NotFoundError("memory", summary_id)
            memory = records[summary_id].memory_id
        chain = [r for r in records.values() if r.memory_id == memory]
        return sorted(chain, key=lambda r: (r.version, r.created_at, r.id))

    def restore(self, summary_id: str, *, user_id: str) -> SummaryRecord:
        """Make a superseded or deleted version its memory's one active version, retiring
        what replaced it (`hymem.sleep.restore.restore_version`).

        The journal gets an override so the next sleep, on the same inputs, does not redo the
        merge or delete that was undone.
        """
        store = self._store
        if store.read_only:
            raise ReadOnlyStoreError("restore writes: open the memory for writing")
        with self._guard.versions(user_id):
            restored = restore_version(store, user_id, summary_id)
            self._override(user_id, summary_id)
            log.info("sleep.restored", user_id=user_id, summary_id=summary_id)
            return restored

    def _override(self, user_id: str, summary_id: str) -> None:
        latest: dict[str, JournalEntry] = {}
        for e in self._journal.for_target(summary_id):
            latest[e.key] = e
        now = self._clock()
        overrides = [
            e.model_copy(
                update={
                    "kind": "override",
                    "action": "ignore",
                    "text": None,
                    "rejected": None,
                    "reason": "restored by the user",
                    "at": now,
                }
            )
            for e in latest.values()
            if e.action != "ignore"
        ]
        self._journal.append(overrides)


def _count_calls(report: SleepReport, runner: DecisionRunner) -> None:
    """The model's cost: the update decisions' and the re-summarise pass's calls."""
    report.asked = runner.asked
    report.failed = runner.failed
    report.usage = runner.usage.model_copy(deep=True)
    if report.resummarised.usage.calls:
        report.usage.add("summarise", report.resummarised.usage)
    total = report.usage.total
    report.model_calls = total.calls
    report.prompt_tokens = total.prompt_tokens
    report.completion_tokens = total.completion_tokens
