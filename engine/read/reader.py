"""The read path: `Reader.ask` drives the scheduler and turns its result into an Answer and a
trace; `Reader.context` assembles what a path would read.

A `Reader` is built once per Memory from the parts it reads through: the store (segments,
trace rows), the embedder (the query vector), the searcher, the roles and the config. Each ask
comes checked (`hymem.read.params.AskParams`, built at the API edge) and drives
`hymem.read.scheduler.schedule`: `hymem.read.steps.drive` executes its steps against a
`hymem.read.run.Run`, which holds what the ask has retrieved, spent and timed so far (user
isolation is enforced there).
"""

from __future__ import annotations

import dataclasses
import functools
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from hymem.core.config import MemoryConfig
from hymem.core.errors import LLMError
from hymem.core.logging import get_logger
from hymem.core.time import Clock, utcnow
from hymem.core.types import Answer, Hit
from hymem.embed.embedders import Embedder
from hymem.indexes.protocol import RowScope
from hymem.llm.roles import RolesProvider
from hymem.read.budget import Budget
from hymem.read.fence import EraseFence
from hymem.read.naming import as_the_user, name_in
from hymem.read.params import AskParams
from hymem.read.ports import ReadStore
from hymem.read.replay import Replay, find_trace, replay_params, side
from hymem.read.run import Run
from hymem.read.scheduler import LightOutcome, ScheduleResult, escalation, schedule
from hymem.read.steps import drive, light_verdict, select
from hymem.read.trace_record import Trace
from hymem.read.traces import TraceWriter, build_trace, log_trace
from hymem.search.searcher import VectorSearcher

log = get_logger("hymem.read.reader")


class Reader:
    """Answers questions (ask) and assembles context (context) for one Memory.

    Cheap to build: the roles are resolved on the first call that needs a model, and the
    trace writer starts its thread on the first trace."""

    def __init__(
        self,
        store: ReadStore,
        embedder: Embedder,
        searcher: VectorSearcher,
        roles: RolesProvider,
        config: MemoryConfig,
        *,
        clock: Clock = utcnow,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._searcher = searcher
        self._roles = roles
        self._config = config
        self._clock = clock
        self._traces = TraceWriter()
        self._fence = EraseFence()

    def ask(self, params: AskParams) -> Answer:
        """HyMem Algorithm 1 under the per-ask budget; always writes a trace (best effort).
        `params.as_of` (naive UTC) is when the question is asked; None means now, unbounded.
        Its scope's filter restricts every retrieval of the ask to matching metadata.
        Refused (ErasureInProgressError) while the user is being erased."""
        with self._fence.reading(params.user_id):
            return self._ask(params)[0]

    def replay(self, trace_id: str, user_id: str) -> Replay:
        """A past ask's records as it read them, beside the same question asked now
        (`hymem.read.replay`)."""
        with self._fence.reading(user_id):
            return self._replay(trace_id, user_id)

    def _replay(self, trace_id: str, user_id: str) -> Replay:
        self.flush_traces()
        past = find_trace(self._store, trace_id, user_id)
        then = side(self._store, past)
        answer, trace = self._ask(replay_params(past, self._config))
        now = side(self._store, trace)
        log.info("ask.replay", trace_id=trace_id, user_id=user_id, now=answer.trace_id)
        return Replay(
            question=past.question,
            user_id=user_id,
            asked_at=past.created_at,
            as_of=past.as_of,
            then=then,
            now=now,
        )

    def _ask(self, params: AskParams) -> tuple[Answer, Trace]:
        cfg = self._config
        budget = Budget(cfg.max_calls_per_ask, cfg.max_tokens_per_ask)
        asked = self._as_the_user(params)
        run = self._run(asked)
        trace_id = uuid.uuid4().hex
        started = time.perf_counter()
        # the failure trace and the success trace share everything but the outcome
        trace_for = functools.partial(
            build_trace,
            run=run,
            trace_id=trace_id,
            question=params.question,
            user_id=params.user_id,
            depth=params.plan.depth,
            plan=dataclasses.asdict(params.plan),
            budget=budget,
            clock=self._clock,
        )
        gen = schedule(asked.question, params.plan, budget=budget)
        try:
            result = drive(run, gen)
        except LLMError as exc:
            run.latency["total"] = (time.perf_counter() - started) * 1000.0
            self._record(trace_for(None, error=exc))
            raise
        run.latency["total"] = (time.perf_counter() - started) * 1000.0
        answer = _answer(run, result, trace_id)
        answer.question = params.question  # as the caller asked it
        trace = trace_for(answer, schedule=result)
        answer.latency_ms["trace"] = self._record(trace)
        return answer, trace

    def context(self, params: AskParams) -> list[Hit]:
        """The context a path would read: the light summaries; the deep path's segments
        (model-selected); or, for auto, light hits plus deep segments when the light verdict
        would be incomplete."""
        with self._fence.reading(params.user_id):
            return self._context(params)

    def _context(self, params: AskParams) -> list[Hit]:
        params = self._as_the_user(params)
        question, plan = params.question, params.plan
        run = self._run(params)
        hits: list[Hit] = []
        verdict: LightOutcome | None = None
        if plan.depth != "deep":
            hits = run.light_hits(0, question, plan.k)
            if plan.depth == "auto":  # only auto's verdict decides anything: no model call else
                verdict = light_verdict(run, 0, hits)
        if escalation(plan.depth, verdict) is None:
            return hits
        candidates = run.candidates(0, question, plan.n_deep)
        select(run, 0, question, candidates, plan.batch, model=True)
        return [*hits, *run.segments(0)]

    def _as_the_user(self, params: AskParams) -> AskParams:
        """`params` asking about "the user" where the question names the user by id and the
        user's memory never mentions that name (`hymem.read.naming`): one lexical lookup of
        the name, only for questions that contain it."""
        name = name_in(params.question, params.user_id)
        if name is None or self._store.lexical_search(RowScope(params.user_id), name, 1):
            return params
        return dataclasses.replace(params, question=as_the_user(params.question, params.user_id))

    def _run(self, params: AskParams) -> Run:
        return Run(
            params,
            store=self._store,
            embedder=self._embedder,
            searcher=self._searcher,
            roles=self._roles,
            concurrency=_select_concurrency(self._config),
            fallback=self._config.ask_fallback,
        )

    def flush_traces(self) -> None:
        """Wait until every finished ask's trace row is in the store."""
        self._traces.flush()

    @contextmanager
    def erasing(self, user_id: str) -> Iterator[None]:
        """For an erase of `user_id`: the user's asks, contexts and replays are refused for
        the block, which is entered once those already running have ended and their traces
        are in the store (`hymem.read.fence`), so no trace of the user lands after it."""
        with self._fence.erasing(user_id):
            self.flush_traces()
            yield

    def close(self) -> None:
        """Write the traces still queued, then stop the trace thread."""
        self._traces.close()

    def _record(self, trace: Trace) -> float:
        """Log the ask's trace event and queue its row; returns the ms this took. A read-only
        store keeps no trace rows (the event is still logged): the writer process owns them."""
        start = time.perf_counter()
        log_trace(trace)
        if not self._store.read_only:
            self._traces.submit(self._store, trace)
        return (time.perf_counter() - start) * 1000.0


def _select_concurrency(config: MemoryConfig) -> int:
    """How many selection batches of one ask are judged at once: `llm_concurrency`, and no
    more than a per-backend bound on requests in flight (`llm_max_concurrency`) where the
    config has one, so one ask never queues more requests than the server takes."""
    bound = getattr(config, "llm_max_concurrency", None)
    if isinstance(bound, int) and bound >= 1:
        return min(config.llm_concurrency, bound)
    return config.llm_concurrency


def _answer(run: Run, result: ScheduleResult, trace_id: str) -> Answer:
    text, fallbacks = result.answer, list(run.fallbacks)
    if not text.strip():  # nothing to answer from (e.g. no memories yet): say so, flagged
        text = NO_ANSWER
        fallbacks.append(NO_ANSWER_FLAG)
    return Answer(
        text=text,
        question=run.question,
        user_id=run.user_id,
        path=result.path,
        escalated=result.escalated,
        escalation_reason=result.escalation_reason,
        complete=result.complete and text is result.answer,
        iterations=result.iterations,
        evidence=run.evidence(result),
        usage=run.usage,
        latency_ms=run.latency,
        prompt_versions=run.versions,
        fallbacks=fallbacks,
        fallback=run.fallback,
        budget_exhausted=result.budget_exhausted,
        backend=run.roles.label,
        as_of=run.as_of,
        trace_id=trace_id,
    )


# What ask() returns when no path produced an answer: never an empty string.
NO_ANSWER = "Unable to answer: nothing in this user's memory answers the question."
NO_ANSWER_FLAG = "answer: no memory answered the question"
