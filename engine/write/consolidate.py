"""Consolidation at write time: a flush's new summaries against the user's active ones.

Were it left to sleep, a repeated or changed fact would stay active beside the old one (and
sleep may never run): every flush would add duplicates, and "I moved to Porto" would be served
beside "I live in Lisbon". So, as a flush commits, each new summary is compared with a few of the
user's active summaries (and the flush's other new ones): its nearest neighbours by vector
(`NEIGHBOURS`, the candidate search sleep uses, bounded) and the ones stating the same fact
(`SummaryRecord.fact_key`, read by key, so a changed value is found even when its wording is far
from the old one), within its own scope only: the same metadata, so the same agent, run, caller
keys and adapter store key (`same_scope`); a twin in another scope stays that scope's memory.
`hymem.facts` decides the clear cases without a model:

* duplicate: no second active row. The new summary retires into the survivor, and when it rests
  on turns the survivor lacks, the survivor gets a new version holding them too (same memory id).
  Its `segment_id` stays the survivor's; a repeat said in another segment keeps its turns'
  own segment links, so the memory still leads to the raw text of each (`get()` shows both);
* supersede: a newer value of the same fact ends the old summary, whose `valid_to` becomes the
  time the new value was said (a version change, restorable with `restore`);
* stale: a summary older than the value already stored (an old message imported late) is stored
  already ended, at the newer value's time;
* anything else is kept, both left for sleep, which remains the full pass.

The decisions are planned before the flush commits and written in the flush's own journaled
commit (`Commits.commit_segments(changes=...)`, `folding`): the new summaries go in already
ended where they retire, survivors' new versions with them, and the older summaries' status
changes inside the same commit, so a crash or an outage leaves all of it or none (a rollback
gives the older rows back their status). This is under the versions lock like sleep and
corrections; when a sleep, restore or erasure holds it, the flush commits plainly and the
decisions are made after it (`after_write`) in one journaled `apply_summary_changes`, as
before the fold. A crash between those two writes leaves both summaries active: the store is
consistent, and the next sleep merges them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from hymem.core.errors import HymemError, LLMError
from hymem.core.filters import Filter
from hymem.core.logging import get_logger
from hymem.core.metadata import canonical
from hymem.core.types import (
    Level,
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    SummaryStatus,
)
from hymem.embed.embedders import Embedder
from hymem.facts import Candidate, Decision, decide, fact_key
from hymem.indexes.protocol import ACTIVE_ONLY, RowScope
from hymem.llm.roles import ContextItem, RolesProvider
from hymem.write.consolidation_plan import Consolidated, Plan, same_scope, similar_within
from hymem.write.decisions import normalise_decision
from hymem.write.guard import WriteGuard
from hymem.write.ports import ConsolidationStore
from hymem.write.recent import RecentSummaries, vouched

log = get_logger("hymem.write.consolidate")

NEIGHBOURS = 5  # nearest active summaries a new one is compared with (plus its fact's)
# A neighbour less similar than this is no repeat without a shared fact (found by key): `decide`
# merges a fact-less pair only at cosine >= 0.97 or with the same content words (which MiniLM
# puts above 0.9). Below it no row is read: most flushes then cost one cached search.
NEAR = 0.85


def with_fact_keys(summaries: Sequence[SummaryRecord]) -> list[SummaryRecord]:
    return [s.model_copy(update={"fact_key": fact_key(s.text)}) for s in summaries]


@dataclass
class Folded:
    """A flush's consolidation, planned before its commit: the summaries to write (the
    flush's own, those it retires already ended, and new versions of survivors), the status
    changes of summaries already stored, and what was decided."""

    summaries: list[SummaryRecord]
    changes: list[StatusChange]
    done: Consolidated


class WriteConsolidation:
    """Plans and applies the decisions for one user's freshly committed summaries."""

    def __init__(
        self,
        store: ConsolidationStore,
        clock: Callable[[], datetime],
        *,
        roles: RolesProvider | None = None,
        embedder: Embedder | None = None,
        on: bool = True,
    ) -> None:
        self._store = store
        self._clock = clock
        self._roles = roles  # with a model configured, it decides what the rules leave
        self._embedder = embedder
        self._on = on  # MemoryConfig.consolidate_on_write
        self._written: dict[str, list[SummaryRecord]] = {}
        self._recent = RecentSummaries()  # what this writer committed lately, whole

    def after_write(self, user_id: str, guard: WriteGuard) -> Consolidated | None:
        """Consolidate what an add/flush committed without folding it in (`folding` found
        the versions lock taken, or its planning failed), after its own commit, under the
        versions lock (taken before the right to write, as everywhere); returns what it
        changed (None: nothing to do). A failure here loses nothing (the write is
        committed): both summaries stay for sleep."""
        written = self._written.pop(user_id, None)
        if not (self._on and written):
            return None
        try:
            with guard.versions(user_id):
                return self.run(user_id, [r.id for r in written], written)
        except (HymemError, OSError) as exc:
            log.warning("ingest.consolidation_failed", user_id=user_id, error=str(exc))
            return None

    def committed(self, user_id: str, summaries: Sequence[SummaryRecord]) -> None:
        """Summaries committed without their consolidation folded in (with vectors), so
        `after_write` need not read back what was just written."""
        if self._on:
            self._written.setdefault(user_id, []).extend(summaries)
            self._recent.remember(summaries)

    def commit(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        turn_ids: Sequence[str],
        guard: WriteGuard,
    ) -> Consolidated | None:
        """A flush's commit, with its consolidation folded in where it can be (`folding`),
        returned; otherwise a plain commit, handed to `after_write` (None)."""
        with self.folding(user_id, summaries, guard) as folded:
            if folded is None:
                self._store.commit_segments(user_id, segments, summaries, turn_ids)
                self.committed(user_id, summaries)
                return None
            self._store.commit_segments(
                user_id, segments, folded.summaries, turn_ids, changes=folded.changes
            )
            self._recent.remember(folded.summaries)
            self._recent.forget(c.summary_id for c in folded.changes)
        return folded.done

    @contextmanager
    def folding(
        self, user_id: str, summaries: Sequence[SummaryRecord], guard: WriteGuard
    ) -> Iterator[Folded | None]:
        """A flush's consolidation planned before its commit, so the flush writes it in its
        own journaled commit (`Commits.commit_segments(changes=...)`) instead of a second
        one after it (that second commit cost the write path 20 % on LongMemEval). The
        versions lock is held from the plan to the end of the block. None, and the caller
        commits plainly and hands the summaries to `after_write`: consolidation off, the
        lock held by a sleep, restore or erasure (never waited for here, where the user's
        lease is already held: that would invert the lock order), or a planning failure."""
        if not (self._on and summaries) or not guard.versions_lock.acquire(blocking=False):
            yield None
            return
        try:
            try:
                folded = self._fold(user_id, list(summaries))
            except (HymemError, OSError) as exc:
                log.warning("ingest.consolidation_failed", user_id=user_id, error=str(exc))
                folded = None
            yield folded
        finally:
            guard.versions_lock.release()

    def _fold(self, user_id: str, summaries: list[SummaryRecord]) -> Folded:
        done = Consolidated([], [], [], [])
        fresh = sorted(
            (r for r in summaries if r.vector is not None),
            key=lambda r: (r.valid_from or r.created_at, r.id),
        )
        plan = self._plan(user_id, fresh, done, committed=False)
        writing = {r.id: r for r in [*summaries, *plan.new]}
        stored: list[StatusChange] = []
        for change in plan.changes:
            rec = writing.get(change.summary_id)
            if rec is None:
                stored.append(change)
                continue
            writing[rec.id] = rec.model_copy(
                update={
                    "status": SummaryStatus(change.status),
                    "superseded_by": change.superseded_by,
                    "reason": change.reason,
                    "evidence_id": change.evidence_id,
                    "valid_to": change.valid_to,
                    "updated_at": plan.now,
                }
            )
        done.versions = [v.id for v in plan.new]
        return Folded(list(writing.values()), stored, done)

    def run(
        self,
        user_id: str,
        new_ids: Sequence[str],
        written: Sequence[SummaryRecord] | None = None,
    ) -> Consolidated:
        """Consolidate summaries already committed, in one journaled
        `apply_summary_changes` (sleep's fact pass, and flushes `folding` did not fold)."""
        done = Consolidated([], [], [], [])
        wanted = set(new_ids)
        fresh = [r for r in written or () if r.id in wanted and r.vector is not None]
        if len(fresh) < len(wanted):  # not handed over (a sleep's pass): read them
            fresh = self._store.get_summaries(user_id, ids=list(new_ids), with_vectors=True)
            fresh = [r for r in fresh if r.vector is not None]
        if not fresh:
            return done
        fresh.sort(key=lambda r: (r.valid_from or r.created_at, r.id))
        plan = self._plan(user_id, fresh, done, committed=True)
        if plan.changes:
            self._store.apply_summary_changes(user_id, plan.new, plan.changes)
            self._recent.forget(c.summary_id for c in plan.changes)
            self._recent.remember(plan.new)
            done.versions = [v.id for v in plan.new]
            log.info(
                "ingest.consolidated",
                user_id=user_id,
                merged=len(done.merged),
                superseded=len(done.superseded),
                stale=len(done.stale),
            )
        return done

    def _plan(
        self, user_id: str, fresh: list[SummaryRecord], done: Consolidated, *, committed: bool
    ) -> Plan:
        """Each fresh summary (oldest first) against its neighbours and the summaries
        stating its fact: the rules' decision, or the model's where they keep both."""
        pool, near = self._pool(user_id, fresh, committed=committed)
        stating: dict[str, list[SummaryRecord]] = {}  # fact key -> the pool's summaries of it
        for p in pool.values():
            if p.fact_key:
                stating.setdefault(p.fact_key, []).append(p)
        plan = Plan(self._clock())
        for rec in fresh:
            if rec.id in plan.retired:
                continue
            same = stating.get(rec.fact_key, []) if rec.fact_key else []
            ids = dict.fromkeys([*near[rec.id], *(p.id for p in same)])
            neighbours = [
                plan.current(pool[i])
                for i in ids
                if i != rec.id and i not in plan.retired and same_scope(rec, pool[i])
            ]
            neighbours = list({n.id: n for n in neighbours if n.id not in plan.retired}.values())
            decision = decide(_candidate(rec), [_candidate(n) for n in neighbours])
            worded = False  # the model wrote the merged memory's text
            if decision.kind == "keep" and neighbours:
                decision, rec, worded = self._ask_model(rec, neighbours[0])
            plan.apply(rec, decision, {n.id: n for n in neighbours}, done, worded=worded)
        return plan

    def _ask_model(
        self, rec: SummaryRecord, nearest: SummaryRecord
    ) -> tuple[Decision, SummaryRecord, bool]:
        """With a model configured, the existing `update` role decides a pair the rules
        leave (the new summary against its nearest active one): "update" merges them into
        one memory with the model's text, "delete" ends the older one, anything else (and any
        model failure) keeps both for sleep. Without a model: keep."""
        keep = Decision("keep")
        if self._roles is None or self._embedder is None:
            return keep, rec, False
        roles = self._roles()
        if roles.label == "extractive":
            return keep, rec, False
        try:
            result = roles.update(_item(nearest), [_item(rec)])
        except LLMError as exc:
            log.warning("ingest.consolidation_model_failed", target_id=nearest.id, error=str(exc))
            return keep, rec, False
        if result.fallback:
            return keep, rec, False
        out = result.output
        d = normalise_decision(nearest, [rec], out.action, out.text, rec.id, out.reason)
        reason = d.reason or "decided by the model"
        if d.action == "delete":
            return Decision("supersede", (nearest.id,), reason), rec, False
        if d.action == "update" and d.text:
            vector = [float(x) for x in self._embedder.embed([d.text])[0]]
            merged = rec.model_copy(update={"text": d.text, "vector": vector})
            return Decision("duplicate", (nearest.id,), reason), merged, True
        return keep, rec, False

    def _pool(
        self, user_id: str, fresh: list[SummaryRecord], *, committed: bool = True
    ) -> tuple[dict[str, SummaryRecord], dict[str, list[str]]]:
        """Every summary the flush's decisions may touch, read in at most three calls whatever
        the flush's size (plus one search per further metadata scope in it): each new
        summary's nearest active ones of its own scope (one batched search, from the dense
        cache), then only where needed the active ones stating the same facts and
        the rows of the neighbours close enough to be a repeat (`NEAR`): most flushes state
        no recognised fact and repeat nothing, and read nothing more. A neighbour this writer
        committed lately is taken from `RecentSummaries` where the store's row vouches for it."""
        found: list[list[tuple[str, float]]] = [[] for _ in fresh]
        for members in _by_scope(fresh):
            group = [fresh[i] for i in members]
            vectors = [r.vector for r in group if r.vector is not None]  # all have one
            hits = self._store.dense_search_many(
                _scope_of(user_id, group[0]), vectors, NEIGHBOURS + 1
            )
            if not committed:  # the flush's own summaries are not in the store yet
                hits = [
                    sorted([*mine, *others], key=lambda pair: -pair[1])[: NEIGHBOURS + 1]
                    for mine, others in zip(
                        hits, similar_within(group, NEIGHBOURS + 1), strict=True
                    )
                ]
            for i, mine in zip(members, hits, strict=True):
                found[i] = mine
        near = {
            r.id: [i for i, sim in hits if sim >= NEAR and i != r.id]
            for r, hits in zip(fresh, found, strict=True)
        }
        pool = {r.id: r for r in fresh}
        keys = sorted({r.fact_key for r in fresh if r.fact_key})
        if keys:
            same = self._store.get_summaries(user_id, fact_keys=keys, with_vectors=True)
            pool.update((r.id, r) for r in same if r.id not in pool)
        missing = sorted({i for ids in near.values() for i in ids} - set(pool))
        kept = self._recent.candidates(user_id, missing)
        if kept:  # rows this writer committed lately, vouched for by the store's own rows
            known = vouched(kept, self._store.hydrate(user_id, Level.SUMMARY, list(kept)))
            pool.update(known)
            missing = [i for i in missing if i not in known]
        if missing:
            rows = self._store.get_summaries(user_id, ids=missing, with_vectors=True)
            pool.update((r.id, r) for r in rows)
        near = {k: [i for i in v if i in pool] for k, v in near.items()}
        return pool, near


def _by_scope(fresh: Sequence[SummaryRecord]) -> list[list[int]]:
    """Indices of `fresh` grouped by metadata (first seen first): one neighbour search per
    scope, so a twin in another scope never takes a same-scope candidate's place."""
    groups: dict[str, list[int]] = {}
    for i, rec in enumerate(fresh):
        groups.setdefault(canonical(rec.metadata), []).append(i)
    return list(groups.values())


def _scope_of(user_id: str, rec: SummaryRecord) -> RowScope:
    """The active summaries a neighbour search of `rec` reads: the user's, holding every
    metadata key of `rec` with its value. A row holding more keys passes the filter (no
    filter says "no other key"); `same_scope` refuses it when the plan decides."""
    filters = Filter.parse(dict(rec.metadata)) if rec.metadata else None
    return RowScope(user_id, level=Level.SUMMARY, statuses=ACTIVE_ONLY, filters=filters)


def _item(rec: SummaryRecord) -> ContextItem:
    return ContextItem(id=rec.id, text=rec.text, time_start=rec.time_start, time_end=rec.time_end)


def _candidate(rec: SummaryRecord) -> Candidate:
    return Candidate(id=rec.id, text=rec.text, valid_from=rec.valid_from, vector=rec.vector)


__all__ = [
    "NEIGHBOURS",
    "Consolidated",
    "WriteConsolidation",
    "with_fact_keys",
]
