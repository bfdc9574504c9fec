"""One ask's execution state: `Run` carries out the scheduler's steps against the searcher, the
store and the roles, and keeps what the ask retrieved, spent and timed so far (the Answer and
the trace are built from it). Isolation lives here: every search and store read is filtered by
`user_id`, the ids a model selects are intersected with the candidates it was shown, and every
segment read is checked against `user_id` again before its text reaches a prompt.

A model that fails (unavailable, timed out, a rejected request such as a prompt over the
server's context window, or a reply that never validated) never fails the ask: a failed
selection batch keeps its similarity order, a failed deep answer falls back to the light answer
(the round's own, else one asked now), a failed light answer to the extractive one over the same
summaries, and a failed reflection stops the rounds. Each is listed in `fallbacks` and
`fallback` names what answered, so the Answer and its trace show it. Only a credentials error
(LLMAuthError), which no fallback would fix for the next ask either, is raised.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeVar

import numpy as np
from hymem.core.errors import LLMAuthError, LLMError, LLMUnavailable
from hymem.core.logging import get_logger
from hymem.core.tracing import set_attributes, span
from hymem.core.types import Hit, Level, RoleUsage, Usage
from hymem.embed.embedders import Embedder
from hymem.indexes.protocol import Row, Storage, Vector
from hymem.llm.extractive.backend import ExtractiveRoles
from hymem.llm.pool import map_concurrent
from hymem.llm.roles import (
    ContextItem,
    LightAnswerOutput,
    RoleResult,
    Roles,
    RolesProvider,
    SelectOutput,
)
from hymem.llm.tokens import count_tokens
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
from hymem.read.segments import read_segments
from hymem.search.anchors import capitalised, find_anchors
from hymem.search.hybrid import Ranked
from hymem.search.scope import SearchScope
from hymem.search.versions import one_version_each

log = get_logger("hymem.read.run")

_R = TypeVar("_R", bound=RoleResult[Any])


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


@dataclass
class RoundIds:
    """What one round retrieved and read, by id (hits kept for the answer's evidence)."""

    summary_ids: list[str] = field(default_factory=list)  # light top-k
    candidate_ids: list[str] = field(default_factory=list)  # deep top-N
    selected_ids: list[str] = field(default_factory=list)  # chosen by event selection
    segment_ids: list[str] = field(default_factory=list)  # Level-2 read by the deep answer
    turn_ids: list[str] = field(default_factory=list)  # turns covered by those segments
    light_hits: list[Hit] = field(default_factory=list)
    candidates: list[Hit] = field(default_factory=list)
    selected: list[Hit] = field(default_factory=list)
    segments: list[Hit] = field(default_factory=list)
    answered_light: bool = False  # the deep answer failed and the light answer stood in

    def ids(self) -> dict[str, list[str]]:
        return {
            "summary_ids": self.summary_ids,
            "candidate_ids": self.candidate_ids,
            "selected_ids": self.selected_ids,
            "segment_ids": self.segment_ids,
            "turn_ids": self.turn_ids,
            # the light path's summaries stand for these turns (their source_turn_ids)
            "summary_turn_ids": list(dict.fromkeys(t for h in self.light_hits for t in h.turn_ids)),
        }


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
        fallback: bool = True,
    ) -> None:
        """`fallback=False`: a model failure raises instead of falling back (`ask_fallback`)."""
        self._store, self._embedder, self._searcher = store, embedder, searcher
        self._roles, self._concurrency = roles, concurrency
        self._fallback_on = fallback
        self.question, self.user_id = params.question, params.user_id
        # the moment the question is asked: nothing stored after it is retrieved (the scope's
        # upper bound), and the answering roles resolve relative expressions against it
        self.as_of = params.as_of
        self._scope = params.scope  # every search of the ask: this user, matching metadata
        self.filters = params.scope.filters
        self._summary_depth = summary_depth(params.plan)
        self._light_tokens = params.plan.light_tokens
        self._k = params.plan.k
        self.usage = Usage()
        self.latency: dict[str, float] = {}
        self.versions: dict[str, str] = {}
        self.fallbacks: list[str] = []
        # what answered in place of a failed model role: "light" (the light answer stood in
        # for the deep one) or "extractive" (no model answer at all); None: the model did
        self.fallback: Literal["light", "extractive"] | None = None
        self._extractive: Roles | None = None
        # the model was unavailable (down, timed out) in this ask: the later roles of the ask
        # go straight to their fallback instead of each waiting out its own deadline
        self._model_down: LLMError | None = None
        self._failures = threading.Lock()
        self._light_answers: dict[int, str] = {}  # per round: the light answer, when non-empty
        self.notes: list[str] = []  # what the roles corrected, e.g. unknown ids dropped
        self.rounds: dict[int, RoundIds] = {}
        # per round: further segments (a merged repeat's) the deep read's tokens did not fit
        self.segments_left_out: dict[int, int] = {}
        self._vectors: dict[str, np.ndarray] = {}
        # per (query, level): how many hits were asked for, and the hits (best first)
        self._found: dict[tuple[str, Level], tuple[int, list[Hit]]] = {}

    @property
    def roles(self) -> Roles:
        """Resolved on first use, so a light context() call never builds a model client."""
        return self._roles()

    @property
    def model(self) -> Roles:
        """The roles a model step calls: raises the model's earlier LLMUnavailable at once
        when it was unavailable earlier in this ask (the step's fallback then stands in)."""
        if self._model_down is not None:
            raise self._model_down
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

    def model_failed(self, role: str, exc: LLMError, instead: str) -> None:
        """Record a model failure the ask recovers from: in `fallbacks` (the Answer's and the
        trace's), the log and the current span. Raises `exc` when fallbacks are off."""
        if not self._fallback_on:
            raise exc
        reason = f"{role}: {type(exc).__name__}: {exc} -> {instead}"
        with self._failures:  # selection batches fail concurrently
            if isinstance(exc, LLMUnavailable):
                self._model_down = exc
            self.fallbacks.append(reason)
            self.usage.add(role, RoleUsage(fallbacks=1))  # the fallbacks metric counts these
        log.warning(
            "ask.model_failed", user_id=self.user_id, role=role, error=str(exc), instead=instead
        )
        set_attributes({"hymem.fallback": instead, "error.type": type(exc).__name__})

    def extractive(self) -> Roles:
        """The roles that stand in for a failed model: no model, built on first need."""
        if self._extractive is None:
            self._extractive = ExtractiveRoles(self._embedder)
        return self._extractive

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
        anchors), each memory kept once (`hymem.search.versions`), and a `Hit` is built only
        for what `fill_tokens` reads."""
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
        # rows came from several reads: a memory corrected between two of them is read again
        fused, rows = one_version_each(
            pool_scope.rows(), fused, rows, lambda ids: self._searcher.rows(pool_scope, ids)
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
                    lambda batch: self._select_batch(query, batch), batches, self._concurrency
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

    def _select_batch(self, query: str, batch: list[Hit]) -> RoleResult[SelectOutput]:
        """One batch judged by the model; on a model failure, by similarity alone."""
        items = [to_item(h) for h in batch]
        try:
            return self.model.select_events(query, items)
        except LLMAuthError:
            raise
        except LLMError as exc:
            self.model_failed("select", exc, "similarity selection")
            return no_cost(self.extractive().select_events(query, items))

    def segments(self, index: int, tokens_left: int | None = None) -> list[Hit]:
        """Level-2 segments linked from the chosen summaries (`read_segments`), recorded on
        the round with how many further segments `tokens_left` did not fit."""
        hits, left_out = read_segments(
            self._store, self.user_id, self.round(index).selected, tokens_left
        )
        self.segments_left_out[index] = left_out
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
            return self.light_verdict(step.round, hits, step.pool)
        if isinstance(step, DeepRetrieveStep):
            return RetrieveOutcome(len(self.candidates(step.round, step.query, step.n)))
        if isinstance(step, SelectStep):
            hits = self.round(step.round).candidates[: step.max_candidates]
            cost = self.select(step.round, step.query, hits, step.batch_size, step.use_model)
            return SelectOutcome(len(self.round(step.round).selected), cost=cost)
        if isinstance(step, DeepAnswerStep):
            outcome = self._deep_answer(step)
            return replace(outcome, segments_left_out=self.segments_left_out.get(step.round, 0))
        try:
            with self.timed("reflect"):
                ref = self.model.reflect(self.question, step.answer)
        except LLMAuthError:
            raise
        except LLMError as exc:
            # no verdict: stop the rounds; the scheduler leaves the answer unconfirmed
            self.model_failed("reflect", exc, "stop reflecting")
            return ReflectOutcome(complete=True, fallback=True)
        return ReflectOutcome(
            ref.output.complete, ref.output.new_question, ref.fallback, self.account(ref)
        )

    def light_verdict(self, index: int, hits: list[Hit], pool: Sequence[str] = ()) -> LightOutcome:
        """The light answer over the round's `hits` as the scheduler takes it: an answer a
        fallback produced is never complete (`hymem.read.scheduler.escalation` decides)."""
        res, failed = self.light_answer(hits, list(pool))
        fallback = res.fallback or failed
        log.debug(
            "ask.light",
            round=index,
            complete=res.output.complete,
            fallback=fallback,
            hits=len(hits),
        )
        if res.output.answer.strip():
            self._light_answers[index] = res.output.answer
        return LightOutcome(
            res.output.answer, res.output.complete and not fallback, fallback, self.account(res)
        )

    def _deep_answer(self, step: DeepAnswerStep) -> DeepAnswerOutcome:
        """The round's segments read (within the step's tokens left) and answered from."""
        with self.timed("read_segments"):
            passages = [to_item(h) for h in self.segments(step.round, step.tokens_left)]
        try:
            with self.timed("deep_answer"):
                deep = self.model.deep_answer(
                    self.question, passages, list(step.pool), now=self.as_of
                )
        except LLMAuthError:
            raise
        except LLMError as exc:
            return self._deep_fallback(step, exc)
        log.debug("ask.deep", round=step.round, passages=len(passages), fallback=deep.fallback)
        cost = self.account(deep)
        light = self._light_answers.get(step.round)
        if deep.fallback and not deep.salvaged and light is not None:
            # the deep role's own fallback is an earlier answer or "unable to answer": the
            # round's light answer, read from its summaries, says more
            self.fallbacks.append("deep_answer: no usable reply -> light answer")
            self.fallback = self.fallback or "light"
            self.round(step.round).answered_light = True
            return DeepAnswerOutcome(light, fallback=True, cost=cost)
        return DeepAnswerOutcome(deep.output.answer, deep.fallback, cost)

    def light_answer(
        self, hits: list[Hit], pool: list[str]
    ) -> tuple[RoleResult[LightAnswerOutput], bool]:
        """The light answer over `hits` by the model, or, when the model fails, by the
        extractive roles; the flag says the model failed."""
        items = [to_item(h) for h in hits]
        try:
            with self.timed("light_answer"):
                return self.model.light_answer(self.question, items, pool, now=self.as_of), False
        except LLMAuthError:
            raise
        except LLMError as exc:
            self.model_failed("light_answer", exc, "extractive answer")
            with self.timed("light_answer"):
                res = self.extractive().light_answer(self.question, items, pool, now=self.as_of)
            self.fallback = "extractive"
            return no_cost(res), True

    def _deep_fallback(self, step: DeepAnswerStep, exc: LLMError) -> DeepAnswerOutcome:
        """The deep answer failed: the round's light answer stands in, else one asked now
        over the light summaries (by the model, else extractively)."""
        answer = self._light_answers.get(step.round)
        self.model_failed("deep_answer", exc, "light answer")
        cost = Cost()
        if answer is None:
            hits = self.light_hits(step.round, self.question, self._k)
            res, _ = self.light_answer(hits, list(step.pool))
            answer, cost = res.output.answer, self.account(res)
        if self.fallback is None:
            self.fallback = "light"
        self.round(step.round).answered_light = True
        return DeepAnswerOutcome(answer, fallback=True, cost=cost)

    def evidence(self, result: ScheduleResult) -> list[Hit]:
        """What the final round's answer was built from."""
        final = self.round(result.rounds[-1].index)
        if result.path == "light" or final.answered_light:
            return list(final.light_hits)
        # a chosen segment candidate was shown as a snippet: its full read stands for it
        chosen = [h for h in final.selected if h.level != Level.SEGMENT]
        return [*chosen, *final.segments]


def no_cost(result: _R) -> _R:
    """An extractive stand-in's result as costing nothing: no model was called, so neither
    the ask's budget nor the model-call metrics count it (its fallback is counted apart)."""
    return result.model_copy(update={"usage": RoleUsage()})


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
