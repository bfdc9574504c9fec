"""The read path: `Reader.ask` drives the scheduler and turns its result into an Answer and a
trace; `Reader.context` assembles what a path would read.

A `Reader` is built once per Memory from the parts it reads through: the store (segments,
trace rows), the embedder (the query vector), the searcher, the roles and the config. Each ask
drives `hymem.read.scheduler.schedule` with a `hymem.read.run.Run` that executes the steps and
holds what the ask has retrieved, spent and timed so far (user isolation is enforced there).
"""

from __future__ import annotations

import functools
import time
import uuid
from datetime import datetime
from typing import Any

from hymem.config import MemoryConfig
from hymem.embedders import Embedder
from hymem.errors import LLMError, UserInputError
from hymem.filters import Filter
from hymem.indexes.protocol import Storage
from hymem.llm.roles import RolesProvider
from hymem.logging import get_logger
from hymem.read.budget import Budget
from hymem.read.run import Run, VectorSearcher, to_item
from hymem.read.scheduler import Depth, ScheduleResult, schedule
from hymem.read.traces import TraceWriter, build_trace, log_trace
from hymem.time import Clock, utcnow
from hymem.types import Answer, Hit
from hymem.validation import check_iterations, check_k, check_query, check_user_id

log = get_logger("hymem.read.reader")


class Reader:
    """Answers questions (ask) and assembles context (context) for one Memory.

    Cheap to build: the roles are resolved on the first call that needs a model, and the
    trace writer starts its thread on the first trace."""

    def __init__(
        self,
        store: Storage,
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
        as_of: datetime | None = None,
        filters: Filter | None = None,
    ) -> Answer:
        """HyMem Algorithm 1 under the per-ask budget; always writes a trace (best effort).
        `as_of` (naive UTC) is when the question is asked; None means now, unbounded.
        `filters` restricts every retrieval of the ask to matching metadata."""
        _check_args(question, user_id, depth, self._config, k=k, n_deep=n_deep, batch=batch)
        check_iterations(max_iterations)
        cfg = self._config
        budget = Budget(cfg.max_calls_per_ask, cfg.max_tokens_per_ask)
        run = self._run(question, user_id, as_of, filters)
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
            clock=self._clock,
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
            result = run.drive(gen)
        except LLMError as exc:
            run.latency["total"] = (time.perf_counter() - started) * 1000.0
            self._record(trace_for(None, error=exc))
            raise
        run.latency["total"] = (time.perf_counter() - started) * 1000.0
        answer = _answer(run, result, trace_id)
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
        as_of: datetime | None = None,
        filters: Filter | None = None,
    ) -> list[Hit]:
        """The context a path would read: light top-k summaries; the deep path's segments
        (model-selected); or, for auto, light hits plus deep segments when the light verdict
        would be incomplete."""
        cfg = self._config
        k, n_deep, batch = k or cfg.k, n_deep or cfg.n_deep, batch or cfg.select_batch
        _check_args(question, user_id, depth, self._config, k=k, n_deep=n_deep, batch=batch)
        run = self._run(question, user_id, as_of, filters)
        hits: list[Hit] = []
        if depth != "deep":
            hits = run.light_hits(0, question, k)
            if depth == "light":
                return hits
            verdict = run.roles.light_answer(question, [to_item(h) for h in hits], [], now=as_of)
            if verdict.output.complete:
                return hits
        candidates = run.candidates(0, question, n_deep)
        run.select(0, question, candidates, batch, model=True)
        return [*hits, *run.segments(0)]

    def _run(
        self, question: str, user_id: str, as_of: datetime | None, filters: Filter | None
    ) -> Run:
        return Run(
            question,
            user_id,
            store=self._store,
            embedder=self._embedder,
            searcher=self._searcher,
            roles=self._roles,
            concurrency=self._config.llm_concurrency,
            as_of=as_of,
            filters=filters,
        )

    def flush_traces(self) -> None:
        """Wait until every finished ask's trace row is in the store."""
        self._traces.flush()

    def close(self) -> None:
        """Write the traces still queued, then stop the trace thread."""
        self._traces.close()

    def _record(self, trace: dict[str, Any]) -> float:
        """Log the ask's trace event and queue its row; returns the ms this took. A read-only
        store keeps no trace rows (the event is still logged): the writer process owns them."""
        start = time.perf_counter()
        log_trace(trace)
        if not self._store.read_only:
            self._traces.submit(self._store, trace)
        return (time.perf_counter() - start) * 1000.0


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
        budget_exhausted=result.budget_exhausted,
        backend=run.roles.label,
        as_of=run.as_of,
        trace_id=trace_id,
    )


# What ask() returns when no path produced an answer: never an empty string.
NO_ANSWER = "Unable to answer: nothing in this user's memory answers the question."
NO_ANSWER_FLAG = "answer: no memory answered the question"


def _check_args(
    question: str, user_id: str, depth: str, config: MemoryConfig, **sizes: int
) -> None:
    check_user_id(user_id)
    check_query(question, max_chars=config.max_query_chars)
    if depth not in ("auto", "light", "deep"):
        raise UserInputError(f"unknown depth {depth!r}: use auto, light or deep")
    for name, value in sizes.items():
        check_k(value, name=name, maximum=config.max_k)
