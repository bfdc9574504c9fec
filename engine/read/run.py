"""One ask's execution state: `Run` carries out the scheduler's steps against the searcher, the
store and the roles, and keeps what the ask retrieved, spent and timed so far (the Answer and
the trace are built from it). Isolation lives here: every search and store read is filtered by
`user_id`, the ids a model selects are intersected with the candidates it was shown, and every
segment read is checked against `user_id` again before its text reaches a prompt.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

import numpy as np
from hymem.core.logging import get_logger
from hymem.core.types import Hit, Level, SegmentRecord, Usage
from hymem.embed.embedders import Embedder
from hymem.indexes.protocol import Row, Storage, Vector
from hymem.llm.pool import map_concurrent
from hymem.llm.roles import ContextItem, RoleResult, Roles, RolesProvider
from hymem.llm.tokens import count_tokens
from hymem.ops.tracing import span
from hymem.read.candidates import LIGHT_EXTRA, distinct_sources, fuse_candidates, summary_depth
from hymem.read.light import (
    LIGHT_ASPECT,
    LIGHT_POOL,
    LIGHT_SEGMENTS,
    fill_tokens,
    light_ranking,
)
from hymem.read.params import AskParams
from hymem.read.scheduler import (
    Cost,
    DeepAnswerOutcome,
    DeepAnswerStep,
    DeepRetrieveStep,
    LightOutcome,
    LightStep,
    Outcome,
    ReflectOutcome,
    RetrieveOutcome,
    ScheduleResult,
    SelectOutcome,
    SelectStep,
    Step,
)
from hymem.read.traces import RoundIds
from hymem.search.anchors import capitalised, find_anchors
from hymem.search.hybrid import Ranked
from hymem.search.scope import SearchScope

log = get_logger("hymem.read.run")


class VectorSearcher(Protocol):
    """The searches the reader runs (`HybridSearcher` in a Memory, a fake in unit tests): a
    checked scope, and the query's vector, embedded once per ask by the reader and reused
    across rounds. `rank` and `rows` let the light path rank hundreds of candidates as ids
    and read rows only for those it fuses and reads."""

    def find(self, query: str, scope: SearchScope, vector: Vector | None = None) -> list[Hit]: ...

    def rank(
        self,
        query: str,
        scope: SearchScope,
        vector: Vector,
        *,
        also: Sequence[Vector] = (),
        also_k: int = 0,
    ) -> Ranked: ...

    def rows(self, scope: SearchScope, ids: Sequence[str]) -> dict[str, Row]: ...


def to_item(hit: Hit) -> ContextItem:
    """A hit as a role sees it: id, text and its dates."""
    return ContextItem(id=hit.id, text=hit.text, time_start=hit.time_start, time_end=hit.time_end)


class Run:
    """One ask (or one context() call): retrieval state, usage, latency and fallbacks."""

    def __init__(
        self,
        params: AskParams,
        *,
        store: Storage,
        embedder: Embedder,
        searcher: VectorSearcher,
        roles: RolesProvider,
        concurrency: int,
    ) -> None:
        self._store, self._embedder, self._searcher = store, embedder, searcher
        self._roles, self._concurrency = roles, concurrency
        self.question, self.user_id = params.question, params.user_id
        # the moment the question is asked: nothing stored after it is retrieved (the scope's
        # upper bound), and the answering roles resolve relative expressions against it
        self.as_of = params.as_of
        self._scope = params.scope  # every search of the ask: this user, matching metadata
        self.filters = params.scope.filters
        self._summary_depth = summary_depth(params.plan)
        self._light_tokens = params.plan.light_tokens
        self.usage = Usage()
        self.latency: dict[str, float] = {}
        self.versions: dict[str, str] = {}
        self.fallbacks: list[str] = []
        self.notes: list[str] = []  # what the roles corrected, e.g. unknown ids dropped
        self.rounds: dict[int, RoundIds] = {}
        self._vectors: dict[str, np.ndarray] = {}
        # per (query, level): how many hits were asked for, and the hits (best first)
        self._found: dict[tuple[str, Level], tuple[int, list[Hit]]] = {}

    @property
    def roles(self) -> Roles:
        """Resolved on first use, so a light context() call never builds a model client."""
        return self._roles()

    # --- bookkeeping ---------------------------------------------------------------------
    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            ms = (time.perf_counter() - start) * 1000.0
            self.latency[stage] = self.latency.get(stage, 0.0) + ms

    def account(self, result: RoleResult[Any]) -> Cost:
        """Fold one role result into the run; returns its cost for the budget."""
        role = str(result.role)
        self.usage.add(role, result.usage)
        if result.prompt_version:
            self.versions[role] = result.prompt_version
        if result.fallback:
            self.fallbacks.append(f"{role}: {result.fallback_reason or 'fallback'}")
        self.notes.extend(f"{role}: {note}" for note in getattr(result, "notes", ()))
        return Cost(calls=result.usage.calls, tokens=result.usage.total_tokens)

    def round(self, index: int) -> RoundIds:
        return self.rounds.setdefault(index, RoundIds())

    # --- retrieval -----------------------------------------------------------------------
    def search(self, query: str, k: int, level: Level = Level.SUMMARY) -> list[Hit]:
        """The top k hybrid hits. The query is embedded once and reused within the ask, and
        searched once per level: the first summary search of a query fetches as many as its
        round may read (`summary_depth`), so the light top-k and an escalation's deep top-N
        are cut from one search instead of searching the same vector twice."""
        key = (query, level)
        searched = self._found.get(key)
        if searched is None or searched[0] < k:
            depth = max(k, self._summary_depth) if level is Level.SUMMARY else k
            vector = self._vectors.get(query)
            if vector is None:
                vector = self._vectors[query] = self._embedder.embed([query])[0]
            hits = self._searcher.find(query, self._scope.sized(depth, level), vector)
            searched = self._found[key] = (depth, [h for h in hits if h.user_id == self.user_id])
        return searched[1][:k]

    def light_hits(self, index: int, query: str, k: int) -> list[Hit]:
        """The light context: summaries that each add a source turn, by the fused light rank
        until the plan's token budget (`hymem.read.light`), or the top k when it has none."""
        with self.timed("retrieve_light"):
            if self._light_tokens:
                hits = fill_tokens(self._light_ranking(query), self._light_tokens, count_tokens)
            else:
                hits = distinct_sources(self.search(query, k + LIGHT_EXTRA), k)
        self.round(index).summary_ids = [h.id for h in hits]
        self.round(index).light_hits = hits
        return hits

    def _light_ranking(self, query: str) -> Iterator[tuple[Hit, float]]:
        """The fused light rank (`hymem.read.light`), lazily as hits: candidates are ranked
        as ids, rows read once for the hybrid pool and the aspect list (their texts find the
        anchors), and a `Hit` is built only for what `fill_tokens` reads."""
        likely = capitalised(query)
        self._embed_all([query, likely.aspect])  # one batch: the likely aspect
        pool_scope = self._scope.sized(LIGHT_POOL, Level.SUMMARY)
        vector = self._vectors[query]
        ranked = self._searcher.rank(
            query, pool_scope, vector, also=[self._vectors[likely.aspect]], also_k=LIGHT_ASPECT
        )
        segments = self._searcher.rank(
            query, self._scope.sized(LIGHT_SEGMENTS, Level.SEGMENT), vector
        )
        rows = self._searcher.rows(pool_scope, [i for i, _ in ranked.fused[:LIGHT_POOL]])
        hybrid = self._with_rows([i for i, _ in ranked.fused], LIGHT_POOL, rows, pool_scope)
        anchors = find_anchors(query, [rows[i]["text"] for i in hybrid])
        pairs: list[tuple[str, float]] = []
        if anchors.names:  # no anchor: the aspect is the question, whose ranking hybrid holds
            same = anchors.aspect == likely.aspect
            pairs = ranked.also[0] if same else self._dense_ids(anchors.aspect, LIGHT_ASPECT)
            rows.update(self._searcher.rows(pool_scope, [i for i, _ in pairs if i not in rows]))
        aspect = [i for i, _ in pairs if i in rows]
        named = [i for i in aspect if anchors.named_in(rows[i]["text"])]
        segment_of = {i: rows[i]["segment_id"] for i in hybrid}
        fused = light_ranking(
            hybrid, [i for i, _ in segments.fused[:LIGHT_SEGMENTS]], aspect, named, segment_of
        )
        pool = set(hybrid)  # a hit outside the hybrid pool shows its aspect rank
        by_aspect = Ranked(Level.SUMMARY, [], {i: (n, s) for n, (i, s) in enumerate(pairs, 1)})
        for item, score in fused:
            yield (ranked if item in pool else by_aspect).hit(rows[item], score), score

    def _with_rows(
        self, ids: list[str], n: int, rows: dict[str, Row], scope: SearchScope
    ) -> list[str]:
        """The first `n` of `ids` the store holds rows for, reading further rows only when
        an id had none (a lexical hit the table no longer holds is never served)."""
        kept = [i for i in ids[:n] if i in rows]
        at = n
        while len(kept) < n and at < len(ids):
            more = ids[at : at + n - len(kept)]
            rows.update(self._searcher.rows(scope, more))
            kept += [i for i in more if i in rows]
            at += len(more)
        return kept

    def _dense_ids(self, query: str, k: int) -> list[tuple[str, float]]:
        """The top k summaries by the query's vector alone, as (id, cosine similarity)."""
        self._embed_all([query])
        scope = replace(self._scope.sized(k, Level.SUMMARY), mode="dense")
        dense = self._searcher.rank(query, scope, self._vectors[query]).dense
        return [(i, sim) for i, (_, sim) in dense.items()][:k]  # dicts keep rank order

    def _embed_all(self, queries: list[str]) -> None:
        new = [q for q in dict.fromkeys(queries) if q not in self._vectors]
        if new:
            self._vectors.update(zip(new, self._embedder.embed(new), strict=True))

    def candidates(self, index: int, query: str, n: int) -> list[Hit]:
        """Summaries and segments fused (`hymem.read.candidates`): no segment is unreachable."""
        with self.timed("retrieve_deep"):
            hits = fuse_candidates(
                self.search(query, n), self.search(query, n, Level.SEGMENT), n, query
            )
        self.round(index).candidate_ids = [h.id for h in hits]
        self.round(index).candidates = hits
        return hits

    def select(self, index: int, query: str, hits: list[Hit], size: int, model: bool) -> Cost:
        """Event selection: batches of `size` judged concurrently; chosen hits keep rank order."""
        if not model:
            chosen_ids = {h.id for h in hits[:size]}
            cost = Cost()
        else:
            batches = [hits[i : i + size] for i in range(0, len(hits), size)]
            with self.timed("select"):
                results = map_concurrent(
                    lambda batch: self.roles.select_events(query, [to_item(h) for h in batch]),
                    batches,
                    self._concurrency,
                )
            chosen_ids, calls, tokens = set(), 0, 0
            for batch, result in zip(batches, results, strict=True):
                cost = self.account(result)
                calls, tokens = calls + cost.calls, tokens + cost.tokens
                shown = {h.id for h in batch}
                unknown = [i for i in result.output.ids if i not in shown]
                if unknown:
                    log.warning("ask.select_unknown_ids", user_id=self.user_id, ids=unknown)
                chosen_ids.update(i for i in result.output.ids if i in shown)
            cost = Cost(calls=calls, tokens=tokens)
            if not chosen_ids:
                # Every batch said "nothing relevant": read the best-ranked batch rather than
                # answering from no raw text at all.
                log.info("ask.select_none", user_id=self.user_id, candidates=len(hits))
                chosen_ids = {h.id for h in hits[:size]}
        chosen = [h for h in hits if h.id in chosen_ids]
        self.round(index).selected_ids = [h.id for h in chosen]
        self.round(index).selected = chosen
        return cost

    def segments(self, index: int) -> list[Hit]:
        """Level-2 segments linked from the chosen summaries: deduplicated, time-ordered, and
        only this user's (the store filters; a stray row is dropped and logged)."""
        chosen = self.round(index).selected
        score: dict[str, float] = {}
        for hit in chosen:
            score[hit.segment_id] = max(score.get(hit.segment_id, 0.0), hit.fused_score)
        records: list[SegmentRecord] = (
            self._store.get_segments(self.user_id, list(score)) if score else []
        )
        own = [r for r in records if r.user_id == self.user_id and r.id in score]
        if len(own) != len(records):
            log.error(
                "ask.foreign_segment_dropped", user_id=self.user_id, dropped=len(records) - len(own)
            )
        unique = {r.id: r for r in own}.values()
        rank = {seg_id: i for i, seg_id in enumerate(score)}
        ordered = sorted(
            unique,
            key=lambda r: (r.time_start is None, r.time_start or datetime.min, rank[r.id]),
        )
        hits = [
            Hit(
                level=Level.SEGMENT,
                id=r.id,
                user_id=r.user_id,
                text=r.text,
                segment_id=r.id,
                turn_ids=list(r.turn_ids),
                time_start=r.time_start,
                time_end=r.time_end,
                metadata=dict(r.metadata),
                fused_score=score[r.id],
            )
            for r in ordered
        ]
        self.round(index).segment_ids = [h.id for h in hits]
        self.round(index).turn_ids = [t for h in hits for t in h.turn_ids]
        self.round(index).segments = hits
        return hits

    # --- step execution ------------------------------------------------------------------
    def drive(self, steps: Generator[Step, Outcome, ScheduleResult]) -> ScheduleResult:
        """Execute the scheduler's steps, feeding each outcome back, until it returns. Each
        round is one `hymem.round` span, each step a child span (`step_span`)."""
        step = next(steps)
        with ExitStack() as rounds:
            current: int | None = None
            while True:
                if step.round != current:
                    rounds.close()  # the previous round's span ends before the next begins
                    rounds.enter_context(span("hymem.round", {"hymem.round": step.round}))
                    current = step.round
                with step_span(step):
                    outcome = self.execute(step)
                try:
                    step = steps.send(outcome)
                except StopIteration as stop:
                    result: ScheduleResult = stop.value
                    return result

    def execute(self, step: Step) -> Outcome:
        if isinstance(step, LightStep):
            hits = self.light_hits(step.round, step.query, step.k)
            with self.timed("light_answer"):
                res = self.roles.light_answer(
                    self.question, [to_item(h) for h in hits], list(step.pool), now=self.as_of
                )
            log.debug(
                "ask.light",
                round=step.round,
                complete=res.output.complete,
                fallback=res.fallback,
                hits=len(hits),
            )
            return LightOutcome(
                res.output.answer, res.output.complete, res.fallback, self.account(res)
            )
        if isinstance(step, DeepRetrieveStep):
            return RetrieveOutcome(len(self.candidates(step.round, step.query, step.n)))
        if isinstance(step, SelectStep):
            hits = self.round(step.round).candidates[: step.max_candidates]
            cost = self.select(step.round, step.query, hits, step.batch_size, step.use_model)
            return SelectOutcome(len(self.round(step.round).selected), cost=cost)
        if isinstance(step, DeepAnswerStep):
            with self.timed("read_segments"):
                passages = [to_item(h) for h in self.segments(step.round)]
            with self.timed("deep_answer"):
                deep = self.roles.deep_answer(
                    self.question, passages, list(step.pool), now=self.as_of
                )
            log.debug("ask.deep", round=step.round, passages=len(passages), fallback=deep.fallback)
            return DeepAnswerOutcome(deep.output.answer, deep.fallback, self.account(deep))
        with self.timed("reflect"):
            ref = self.roles.reflect(self.question, step.answer)
        return ReflectOutcome(
            ref.output.complete, ref.output.new_question, ref.fallback, self.account(ref)
        )

    def evidence(self, result: ScheduleResult) -> list[Hit]:
        """What the final round's answer was built from."""
        final = self.round(result.rounds[-1].index)
        if result.path == "light":
            return list(final.light_hits)
        # a chosen segment candidate was shown as a snippet: its full read stands for it
        chosen = [h for h in final.selected if h.level != Level.SEGMENT]
        return [*chosen, *final.segments]


def step_span(step: Step) -> AbstractContextManager[Any]:
    """A step's span: its stage, and for an escalation the reason the light path gave."""
    if isinstance(step, LightStep):
        return span("hymem.light", {"hymem.k": step.k})
    if isinstance(step, DeepRetrieveStep):
        return span("hymem.escalate", {"hymem.escalation.reason": step.reason, "hymem.n": step.n})
    if isinstance(step, SelectStep):
        return span("hymem.select", {"hymem.candidates": step.max_candidates})
    if isinstance(step, DeepAnswerStep):
        return span("hymem.deep_answer")
    return span("hymem.reflect")
