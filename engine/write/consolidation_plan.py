"""A flush's consolidation plan (pure): the versions to write, the status changes, the ids
retired, as `hymem.facts.decide` rules on each new summary (`hymem.write.consolidate` reads
the candidates and writes the plan)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from hymem.core.metadata import canonical
from hymem.core.types import StatusChange, SummaryRecord, SummaryStatus
from hymem.facts import Decision
from hymem.indexes.lexical.analysis import content_terms
from hymem.write.decisions import version_id


@dataclass
class Consolidated:
    """What one flush's consolidation did (ids of the summaries it retired or wrote)."""

    merged: list[str]
    superseded: list[str]
    stale: list[str]
    versions: list[str]


def similar_within(
    fresh: Sequence[SummaryRecord], limit: int | None = None
) -> list[list[tuple[str, float]]]:
    """(id, cosine) of the other summaries of the same flush, most similar first (equal ones
    in flush order), at most `limit` each: what a store search would find once committed.
    Ranked in numpy: a bulk flush of thousands of summaries built and sorted every pair in
    Python before (most of a 10,000-turn flush's time)."""
    n = len(fresh)
    if n < 2:
        return [[] for _ in fresh]
    mat = np.asarray([r.vector for r in fresh], dtype=np.float32)
    mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
    sims = mat @ mat.T
    np.fill_diagonal(sims, -np.inf)  # never its own neighbour
    keep = n - 1 if limit is None else min(limit, n - 1)
    order = np.argsort(-sims, axis=1, kind="stable")[:, :keep]
    ids = [r.id for r in fresh]
    return [[(ids[b], float(sims[a, b])) for b in order[a]] for a in range(n)]


def same_scope(a: SummaryRecord, b: SummaryRecord) -> bool:
    """Whether two summaries may be consolidated at all: the same user and the same metadata,
    which holds every scope a memory was given (agent_id, run_id, the caller's keys, an
    adapter's store key and namespace). A twin in another scope is that scope's own memory:
    merging it away, or ending it by a newer value, would leave its scope finding nothing."""
    return a.user_id == b.user_id and canonical(a.metadata) == canonical(b.metadata)


def says_more(text: str, than: str) -> bool:
    """Whether `text`'s content words strictly include `than`'s: then the merged memory keeps
    the fuller wording (a fuller old wording is kept, the new one's turns still added)."""
    mine, theirs = set(content_terms(text)), set(content_terms(than))
    return theirs < mine


class Plan:
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
        (`worded`): a new version either way, linked to the survivor's segment (the turns
        taken from another segment lead to theirs through their own links)."""
        extra = [t for t in rec.source_turn_ids if t not in survivor.source_turn_ids]
        richer = worded or says_more(rec.text, survivor.text)
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


__all__ = ["Consolidated", "Plan", "same_scope", "says_more", "similar_within"]
