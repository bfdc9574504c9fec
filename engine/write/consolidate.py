"""Consolidation at write time: a flush's new summaries against the user's active ones.

Before issue 30 a repeated or changed fact stayed active beside the old one until a sleep (and
only if one ran), so every flush added duplicates and "I moved to Porto" was served beside "I
live in Lisbon". Now, right after a flush commits, each new summary is compared with a few of
the user's active summaries: its nearest neighbours by vector (`NEIGHBOURS`, the candidate
search sleep uses, bounded) and the ones stating the same fact (`SummaryRecord.fact_key`, read by
key, so a changed value is found even when its wording is far from the old one). `hymem.facts`
decides the clear cases without a model:

* duplicate: no second active row. The new summary retires into the survivor, and when it rests
  on turns the survivor lacks, the survivor gets a new version holding them too (same memory id);
* supersede: a newer value of the same fact ends the old summary, whose `valid_to` becomes the
  time the new value was said (a version change, restorable with `restore`);
* stale: a summary older than the value already stored (an old message imported late) is stored
  already ended, at the newer value's time;
* anything else is kept, both left for sleep, which remains the full pass.

All of a flush's decisions are applied in one journaled `apply_summary_changes`, under the
versions lock like sleep and corrections. A crash between the flush's commit and this write
leaves both summaries active: the store is consistent, and the next sleep merges them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from hymem.embedders import Embedder
from hymem.errors import HymemError, LLMError
from hymem.facts import Candidate, Decision, decide, fact_key
from hymem.indexes.lexical.analysis import content_terms
from hymem.indexes.protocol import ACTIVE_ONLY, RowScope, Storage
from hymem.llm.roles import ContextItem, RolesProvider
from hymem.logging import get_logger
from hymem.sleep.plan import normalise_decision, version_id
from hymem.types import AddResult, Level, StatusChange, SummaryRecord, SummaryStatus
from hymem.write.guard import WriteGuard

log = get_logger("hymem.write.consolidate")

NEIGHBOURS = 5  # nearest active summaries a new one is compared with (plus its fact's)
# A neighbour less similar than this is no repeat without a shared fact (found by key): `decide`
# merges a fact-less pair only at cosine >= 0.97 or with the same content words (which MiniLM
# puts above 0.9). Below it no row is read: most flushes then cost one cached search.
NEAR = 0.85


def with_fact_keys(summaries: Sequence[SummaryRecord]) -> list[SummaryRecord]:
    return [s.model_copy(update={"fact_key": fact_key(s.text)}) for s in summaries]


@dataclass
class Consolidated:
    """What one flush's consolidation did (ids of the summaries it retired or wrote)."""

    merged: list[str]
    superseded: list[str]
    stale: list[str]
    versions: list[str]


class WriteConsolidation:
    """Plans and applies the decisions for one user's freshly committed summaries."""

    def __init__(
        self,
        store: Storage,
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

    def after_write(self, user_id: str, result: AddResult, guard: WriteGuard) -> None:
        """Consolidate what an add/flush wrote, after its own commit, under the versions lock
        (taken before the right to write, as everywhere), and say so in its `result`. A
        failure here loses nothing (the write is committed): both summaries stay for sleep."""
        written = self._written.pop(user_id, None)
        if not (self._on and result.summaries_written):
            return
        try:
            with guard.versions(user_id):
                done = self.run(user_id, result.summaries_written, written)
        except (HymemError, OSError) as exc:
            log.warning("ingest.consolidation_failed", user_id=user_id, error=str(exc))
            return
        result.merged.extend(done.merged)
        result.superseded.extend([*done.superseded, *done.stale])

    def committed(self, user_id: str, summaries: Sequence[SummaryRecord]) -> None:
        """The write path's committed summaries (with vectors), so `after_write` need not read
        back what it just wrote."""
        if self._on:
            self._written.setdefault(user_id, []).extend(summaries)

    def run(
        self,
        user_id: str,
        new_ids: Sequence[str],
        written: Sequence[SummaryRecord] | None = None,
    ) -> Consolidated:
        done = Consolidated([], [], [], [])
        wanted = set(new_ids)
        fresh = [r for r in written or () if r.id in wanted and r.vector is not None]
        if len(fresh) < len(wanted):  # not handed over (a sleep's pass): read them
            fresh = self._store.get_summaries(user_id, ids=list(new_ids), with_vectors=True)
            fresh = [r for r in fresh if r.vector is not None]
        if not fresh:
            return done
        fresh.sort(key=lambda r: (r.valid_from or r.created_at, r.id))
        pool, near = self._pool(user_id, fresh)
        plan = _Plan(self._clock())
        for rec in fresh:
            if rec.id in plan.retired:
                continue
            same = [p for p in pool.values() if rec.fact_key and p.fact_key == rec.fact_key]
            ids = dict.fromkeys([*near[rec.id], *(p.id for p in same)])
            neighbours = [
                plan.current(pool[i]) for i in ids if i != rec.id and i not in plan.retired
            ]
            neighbours = list({n.id: n for n in neighbours if n.id not in plan.retired}.values())
            decision = decide(_candidate(rec), [_candidate(n) for n in neighbours])
            worded = False  # the model wrote the merged memory's text
            if decision.kind == "keep" and neighbours:
                decision, rec, worded = self._ask_model(rec, neighbours[0])
            plan.apply(rec, decision, {n.id: n for n in neighbours}, done, worded=worded)
        if plan.changes:
            self._store.apply_summary_changes(user_id, plan.new, plan.changes)
            done.versions = [v.id for v in plan.new]
            log.info(
                "ingest.consolidated",
                user_id=user_id,
                merged=len(done.merged),
                superseded=len(done.superseded),
                stale=len(done.stale),
            )
        return done

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
        self, user_id: str, fresh: list[SummaryRecord]
    ) -> tuple[dict[str, SummaryRecord], dict[str, list[str]]]:
        """Every summary the flush's decisions may touch, read in at most three calls whatever
        the flush's size: each new summary's nearest active ones (one batched search, from
        the dense cache), then only where needed the active ones stating the same facts and
        the rows of the neighbours close enough to be a repeat (`NEAR`): most flushes state
        no recognised fact and repeat nothing, and read nothing more."""
        scope = RowScope(user_id, level=Level.SUMMARY, statuses=ACTIVE_ONLY)
        vectors = [r.vector for r in fresh if r.vector is not None]
        found = self._store.dense_search_many(scope, vectors, NEIGHBOURS + 1)
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
        if missing:
            rows = self._store.get_summaries(user_id, ids=missing, with_vectors=True)
            pool.update((r.id, r) for r in rows)
        near = {k: [i for i in v if i in pool] for k, v in near.items()}
        return pool, near


def _says_more(text: str, than: str) -> bool:
    """Whether `text`'s content words strictly include `than`'s: then the merged memory keeps
    the fuller wording (a fuller old wording is kept, the new one's turns still added)."""
    mine, theirs = set(content_terms(text)), set(content_terms(than))
    return theirs < mine


def _item(rec: SummaryRecord) -> ContextItem:
    return ContextItem(id=rec.id, text=rec.text, time_start=rec.time_start, time_end=rec.time_end)


def _candidate(rec: SummaryRecord) -> Candidate:
    return Candidate(id=rec.id, text=rec.text, valid_from=rec.valid_from, vector=rec.vector)


class _Plan:
    """The flush's decisions so far: versions to write, status changes, retired ids."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.new: list[SummaryRecord] = []
        self.changes: list[StatusChange] = []
        self.retired: set[str] = set()
        self._replaced: dict[str, SummaryRecord] = {}  # survivor id -> its planned version

    def current(self, rec: SummaryRecord) -> SummaryRecord:
        return self._replaced.get(rec.id, rec)

    def apply(
        self,
        rec: SummaryRecord,
        decision: Decision,
        neighbours: dict[str, SummaryRecord],
        done: Consolidated,
        *,
        worded: bool = False,
    ) -> None:
        if decision.kind == "duplicate":
            self._merge(rec, neighbours[decision.target_ids[0]], decision.reason, worded)
            done.merged.append(rec.id)
        elif decision.kind == "supersede":
            for target in decision.target_ids:
                self._end(neighbours[target], rec, decision.reason)
                done.superseded.append(target)
        elif decision.kind == "stale":
            self._end(rec, neighbours[decision.target_ids[0]], decision.reason)
            done.stale.append(rec.id)

    def _merge(
        self, rec: SummaryRecord, survivor: SummaryRecord, reason: str, worded: bool = False
    ) -> None:
        """Retire `rec` into `survivor`, which takes `rec`'s turns it lacks, and its wording
        when that says everything the survivor's does and more, or when a model wrote it
        (`worded`): a new version either way."""
        extra = [t for t in rec.source_turn_ids if t not in survivor.source_turn_ids]
        richer = worded or _says_more(rec.text, survivor.text)
        into = survivor
        if extra or richer:
            into = self._version(
                survivor, [*survivor.source_turn_ids, *extra], rec if richer else None
            )
        self._retire(rec, into.id, reason or f"duplicate of {survivor.memory_id}")

    def _version(
        self, survivor: SummaryRecord, turns: list[str], wording: SummaryRecord | None
    ) -> SummaryRecord:
        text = wording.text if wording is not None else survivor.text
        vector = wording.vector if wording is not None else survivor.vector
        planned = survivor.id in {v.id for v in self.new}
        if planned:  # a second merge into the same survivor in this flush: widen that version
            version = survivor.model_copy(
                update={"source_turn_ids": turns, "text": text, "vector": vector}
            )
            self.new = [version if v.id == survivor.id else v for v in self.new]
        else:
            number = survivor.version + 1
            version = survivor.model_copy(
                update={
                    "id": version_id(survivor.id, number, text + "|" + ",".join(turns)),
                    "version": number,
                    "previous_id": survivor.id,
                    "superseded_by": None,
                    "text": text,
                    "vector": vector,
                    "source_turn_ids": turns,
                    "origin": "consolidated",
                    "reason": "merged a repeated mention",
                    "created_at": self.now,
                    "updated_at": self.now,
                }
            )
            self.new.append(version)
            self._retire(survivor, version.id, "merged a repeated mention")
        origin = next((k for k, v in self._replaced.items() if v.id == survivor.id), survivor.id)
        self._replaced[origin] = version
        return version

    def _end(self, old: SummaryRecord, newer: SummaryRecord, reason: str) -> None:
        """`old` stops holding when `newer` was said: superseded, with its validity ended."""
        self.retired.add(old.id)
        self.changes.append(
            StatusChange(
                summary_id=old.id,
                status=SummaryStatus.SUPERSEDED,
                superseded_by=newer.id,
                reason=reason or "a newer value of the same fact",
                evidence_id=newer.id,
                valid_to=newer.valid_from,
            )
        )

    def _retire(self, rec: SummaryRecord, into: str, reason: str) -> None:
        self.retired.add(rec.id)
        self.changes.append(
            StatusChange(
                summary_id=rec.id,
                status=SummaryStatus.SUPERSEDED,
                superseded_by=into,
                reason=reason,
                evidence_id=into,
            )
        )


__all__ = [
    "NEIGHBOURS",
    "Consolidated",
    "WriteConsolidation",
    "with_fact_keys",
]
