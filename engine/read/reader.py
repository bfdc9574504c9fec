"""The read path: executes the scheduler's steps against the searcher, the store and the roles.

`Reader(mem)` is built once per Memory. Each ask drives `hymem.read.scheduler.schedule` with a
`_Run` that holds what the ask has retrieved, spent and timed so far; the run becomes the
Answer and its trace. Isolation: every search and store read is filtered by `user_id`, the
ids a model selects are intersected with the candidates it was shown, and every segment read
is checked against `user_id` again before its text reaches a prompt.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import structlog
from hymem.config import MemoryConfig
from hymem.embedders import Embedder
from hymem.errors import LLMError, UserInputError
from hymem.llm.pool import map_concurrent
from hymem.llm.roles import ContextItem, RoleResult, Roles
from hymem.read.budget import Budget
from hymem.read.scheduler import (
    Cost,
    DeepAnswerOutcome,
    DeepAnswerStep,
    DeepRetrieveStep,
    Depth,
    LightOutcome,
    LightStep,
    Outcome,
    ReflectOutcome,
    RetrieveOutcome,
    ScheduleResult,
    SelectOutcome,
    SelectStep,
    Step,
    schedule,
)
from hymem.read.traces import RoundIds, TraceWriter, build_trace, log_trace
from hymem.types import Answer, Hit, Level, SegmentRecord, Usage
from hymem.validation import check_k, check_query, check_user_id

log = structlog.get_logger("hymem.read.reader")


class ReaderHost(Protocol):
    """What the reader needs from the Memory facade (a fake of this drives the unit tests)."""

    config: MemoryConfig

    @property
    def store(self) -> Any: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def searcher(self) -> Any: ...
    @property
    def roles(self) -> Roles: ...


def to_item(hit: Hit) -> ContextItem:
    """A hit as a role sees it: id, text and its dates."""
    return ContextItem(id=hit.id, text=hit.text, time_start=hit.time_start, time_end=hit.time_end)


class _Run:
    """One ask (or one context() call): retrieval state, usage, latency and fallbacks."""

    def __init__(self, host: ReaderHost, question: str, user_id: str) -> None:
        self.host, self.question, self.user_id = host, question, user_id
        self.usage = Usage()
        self.latency: dict[str, float] = {}
        self.versions: dict[str, str] = {}
        self.fallbacks: list[str] = []
        self.notes: list[str] = []  # what the roles corrected, e.g. unknown ids dropped
        self.rounds: dict[int, RoundIds] = {}
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def roles(self) -> Roles:
        """Resolved on first use, so a light context() call never builds a model client."""
        return self.host.roles

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
    def search(self, query: str, k: int) -> list[Hit]:
        """Hybrid summary search; the query is embedded once and reused within the ask."""
        vector = self._vectors.get(query)
        if vector is None:
            vector = self._vectors[query] = self.host.embedder.embed([query])[0]
        hits: list[Hit] = self.host.searcher.search_vector(
            vector, query, user_id=self.user_id, k=k, level=Level.SUMMARY
        )
        return [h for h in hits if h.user_id == self.user_id]

    def light_hits(self, index: int, query: str, k: int) -> list[Hit]:
        with self.timed("retrieve_light"):
            hits = self.search(query, k)
        self.round(index).summary_ids = [h.id for h in hits]
        self.round(index).light_hits = hits
        return hits

    def candidates(self, index: int, query: str, n: int) -> list[Hit]:
        with self.timed("retrieve_deep"):
            hits = self.search(query, n)
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
                    self.host.config.llm_concurrency,
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
            self.host.store.get_segments(self.user_id, list(score)) if score else []
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
                fused_score=score[r.id],
            )
            for r in ordered
        ]
        self.round(index).segment_ids = [h.id for h in hits]
        self.round(index).turn_ids = [t for h in hits for t in h.turn_ids]
        self.round(index).segments = hits
        return hits

    # --- step execution ------------------------------------------------------------------
    def execute(self, step: Step) -> Outcome:
        if isinstance(step, LightStep):
            hits = self.light_hits(step.round, step.query, step.k)
            with self.timed("light_answer"):
                res = self.roles.light_answer(
                    self.question, [to_item(h) for h in hits], list(step.pool)
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
                res = self.roles.deep_answer(self.question, passages, list(step.pool))
            log.debug("ask.deep", round=step.round, passages=len(passages), fallback=res.fallback)
            return DeepAnswerOutcome(res.output.answer, res.fallback, self.account(res))
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
        return [*final.selected, *final.segments]


class Reader:
    """Answers questions (ask) and assembles context (context) for one Memory."""

    def __init__(self, mem: ReaderHost) -> None:
        self._mem = mem
        self._traces = TraceWriter()

    def ask(
        self,
        question: str,
        *,
        user_id: str,
        depth: Depth = "auto",
        k: int = 10,
        n_deep: int = 30,
        batch: int = 10,
        max_iterations: int = 3,
    ) -> Answer:
        """HyMem Algorithm 1 under the per-ask budget; always writes a trace (best effort)."""
        _check_args(question, user_id, depth, k=k, n_deep=n_deep, batch=batch)
        if max_iterations < 0:
            raise UserInputError("max_iterations must be >= 0")
        cfg = self._mem.config
        budget = Budget(cfg.max_calls_per_ask, cfg.max_tokens_per_ask)
        run = _Run(self._mem, question, user_id)
        trace_id = uuid.uuid4().hex
        started = time.perf_counter()
        # the failure trace and the success trace share everything but the outcome
        trace_for = functools.partial(
            build_trace,
            run=run,
            trace_id=trace_id,
            question=question,
            user_id=user_id,
            depth=depth,
            budget=budget,
        )
        gen = schedule(
            question,
            depth=depth,
            k=k,
            n_deep=n_deep,
            batch=batch,
            max_iterations=max_iterations,
            budget=budget,
        )
        try:
            step = next(gen)
            while True:
                try:
                    step = gen.send(run.execute(step))
                except StopIteration as stop:
                    result: ScheduleResult = stop.value
                    break
        except LLMError as exc:
            run.latency["total"] = (time.perf_counter() - started) * 1000.0
            self._record(trace_for(None, error=exc))
            raise
        run.latency["total"] = (time.perf_counter() - started) * 1000.0
        answer = Answer(
            text=result.answer,
            question=question,
            user_id=user_id,
            path=result.path,
            escalated=result.escalated,
            escalation_reason=result.escalation_reason,
            complete=result.complete,
            iterations=result.iterations,
            evidence=run.evidence(result),
            usage=run.usage,
            latency_ms=run.latency,
            prompt_versions=run.versions,
            fallbacks=run.fallbacks,
            budget_exhausted=result.budget_exhausted,
            backend=run.roles.label,
            trace_id=trace_id,
        )
        answer.latency_ms["trace"] = self._record(trace_for(answer, schedule=result))
        return answer

    def context(
        self,
        question: str,
        *,
        user_id: str,
        depth: Depth = "light",
        k: int | None = None,
        n_deep: int | None = None,
        batch: int | None = None,
    ) -> list[Hit]:
        """The context a path would read: light top-k summaries; the deep path's segments
        (model-selected); or, for auto, light hits plus deep segments when the light verdict
        would be incomplete."""
        cfg = self._mem.config
        k, n_deep, batch = k or cfg.k, n_deep or cfg.n_deep, batch or cfg.select_batch
        _check_args(question, user_id, depth, k=k, n_deep=n_deep, batch=batch)
        run = _Run(self._mem, question, user_id)
        hits: list[Hit] = []
        if depth != "deep":
            hits = run.light_hits(0, question, k)
            if depth == "light":
                return hits
            verdict = run.roles.light_answer(question, [to_item(h) for h in hits], [])
            if verdict.output.complete:
                return hits
        candidates = run.candidates(0, question, n_deep)
        run.select(0, question, candidates, batch, model=True)
        return [*hits, *run.segments(0)]

    def flush_traces(self) -> None:
        """Wait until every finished ask's trace row is in the store."""
        self._traces.flush()

    def close(self) -> None:
        """Write the traces still queued, then stop the trace thread."""
        self._traces.close()

    def _record(self, trace: dict[str, Any]) -> float:
        """Log the ask's trace event and queue its row; returns the ms this took."""
        start = time.perf_counter()
        log_trace(trace)
        self._traces.submit(self._mem.store, trace)
        return (time.perf_counter() - start) * 1000.0


def _check_args(question: str, user_id: str, depth: str, **sizes: int) -> None:
    check_user_id(user_id)
    check_query(question)
    if depth not in ("auto", "light", "deep"):
        raise UserInputError(f"unknown depth {depth!r}: use auto, light or deep")
    for name, value in sizes.items():
        check_k(value, name=name)
