"""The scheduler's steps executed against one ask's `Run` (`hymem.read.run`): `drive` feeds
each step's outcome back to the scheduler; the model steps (light answer, event selection, deep
answer, reflection) call the roles and fall back when a model fails.

A model that fails (unavailable, timed out, a rejected request such as a prompt over the
server's context window, or a reply that never validated) never fails the ask: a failed
selection batch keeps its similarity order, a failed deep answer falls back to the light answer
(the round's own, else one asked now), a failed light answer to the extractive one over the same
summaries, and a failed reflection stops the rounds. Each is listed in the run's `fallbacks` and
`fallback` names what answered, so the Answer and its trace show it. Only a credentials error
(LLMAuthError), which no fallback would fix for the next ask either, is raised. The ids a model
selects are intersected with the candidates it was shown.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import replace
from typing import Any, TypeVar

from hymem.core.errors import LLMAuthError, LLMError
from hymem.core.logging import get_logger
from hymem.core.tracing import span
from hymem.core.types import Hit, RoleUsage
from hymem.llm.pool import map_concurrent
from hymem.llm.roles import ContextItem, LightAnswerOutput, RoleResult, SelectOutput
from hymem.read.run import Run
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

log = get_logger("hymem.read.steps")

_R = TypeVar("_R", bound=RoleResult[Any])


def select(run: Run, index: int, query: str, hits: list[Hit], size: int, model: bool) -> Cost:
    """Event selection: batches of `size` judged concurrently; chosen hits keep rank order."""
    if not model:
        chosen_ids = {h.id for h in hits[:size]}
        cost = Cost()
    else:
        batches = [hits[i : i + size] for i in range(0, len(hits), size)]
        with run.timed("select"):
            results = map_concurrent(
                lambda batch: _select_batch(run, query, batch), batches, run.concurrency
            )
        chosen_ids, calls, tokens = set(), 0, 0
        for batch, result in zip(batches, results, strict=True):
            cost = run.account(result)
            calls, tokens = calls + cost.calls, tokens + cost.tokens
            shown = {h.id for h in batch}
            unknown = [i for i in result.output.ids if i not in shown]
            if unknown:
                log.warning("ask.select_unknown_ids", user_id=run.user_id, ids=unknown)
            chosen_ids.update(i for i in result.output.ids if i in shown)
        cost = Cost(calls=calls, tokens=tokens)
        if not chosen_ids:
            # Every batch said "nothing relevant": read the best-ranked batch rather than
            # answering from no raw text at all.
            log.info("ask.select_none", user_id=run.user_id, candidates=len(hits))
            chosen_ids = {h.id for h in hits[:size]}
    chosen = [h for h in hits if h.id in chosen_ids]
    run.round(index).selected_ids = [h.id for h in chosen]
    run.round(index).selected = chosen
    return cost


def _select_batch(run: Run, query: str, batch: list[Hit]) -> RoleResult[SelectOutput]:
    """One batch judged by the model; on a model failure, by similarity alone."""
    items = [to_item(h) for h in batch]
    try:
        return run.model.select_events(query, items)
    except LLMAuthError:
        raise
    except LLMError as exc:
        run.model_failed("select", exc, "similarity selection")
        return no_cost(run.extractive().select_events(query, items))


def drive(run: Run, steps: Generator[Step, Outcome, ScheduleResult]) -> ScheduleResult:
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
                outcome = execute(run, step)
            try:
                step = steps.send(outcome)
            except StopIteration as stop:
                result: ScheduleResult = stop.value
                return result


def execute(run: Run, step: Step) -> Outcome:
    if isinstance(step, LightStep):
        hits = run.light_hits(step.round, step.query, step.k)
        return light_verdict(run, step.round, hits, step.pool)
    if isinstance(step, DeepRetrieveStep):
        return RetrieveOutcome(len(run.candidates(step.round, step.query, step.n)))
    if isinstance(step, SelectStep):
        hits = run.round(step.round).candidates[: step.max_candidates]
        cost = select(run, step.round, step.query, hits, step.batch_size, step.use_model)
        return SelectOutcome(len(run.round(step.round).selected), cost=cost)
    if isinstance(step, DeepAnswerStep):
        outcome = _deep_answer(run, step)
        return replace(outcome, segments_left_out=run.segments_left_out.get(step.round, 0))
    try:
        with run.timed("reflect"):
            ref = run.model.reflect(run.question, step.answer)
    except LLMAuthError:
        raise
    except LLMError as exc:
        # no verdict: stop the rounds; the scheduler leaves the answer unconfirmed
        run.model_failed("reflect", exc, "stop reflecting")
        return ReflectOutcome(complete=True, fallback=True)
    return ReflectOutcome(
        ref.output.complete, ref.output.new_question, ref.fallback, run.account(ref)
    )


def light_verdict(run: Run, index: int, hits: list[Hit], pool: Sequence[str] = ()) -> LightOutcome:
    """The light answer over the round's `hits` as the scheduler takes it: an answer a
    fallback produced is never complete (`hymem.read.scheduler.escalation` decides)."""
    res, failed = light_answer(run, hits, list(pool))
    fallback = res.fallback or failed
    log.debug(
        "ask.light",
        round=index,
        complete=res.output.complete,
        fallback=fallback,
        hits=len(hits),
    )
    if res.output.answer.strip():
        run.light_answers[index] = res.output.answer
    return LightOutcome(
        res.output.answer, res.output.complete and not fallback, fallback, run.account(res)
    )


def _deep_answer(run: Run, step: DeepAnswerStep) -> DeepAnswerOutcome:
    """The round's segments read (within the step's tokens left) and answered from."""
    with run.timed("read_segments"):
        passages = [to_item(h) for h in run.segments(step.round, step.tokens_left)]
    try:
        with run.timed("deep_answer"):
            deep = run.model.deep_answer(run.question, passages, list(step.pool), now=run.as_of)
    except LLMAuthError:
        raise
    except LLMError as exc:
        return _deep_fallback(run, step, exc)
    log.debug("ask.deep", round=step.round, passages=len(passages), fallback=deep.fallback)
    cost = run.account(deep)
    light = run.light_answers.get(step.round)
    if deep.fallback and not deep.salvaged and light is not None:
        # the deep role's own fallback is an earlier answer or "unable to answer": the
        # round's light answer, read from its summaries, says more
        run.fallbacks.append("deep_answer: no usable reply -> light answer")
        run.fallback = run.fallback or "light"
        run.round(step.round).answered_light = True
        return DeepAnswerOutcome(light, fallback=True, cost=cost)
    return DeepAnswerOutcome(deep.output.answer, deep.fallback, cost)


def light_answer(
    run: Run, hits: list[Hit], pool: list[str]
) -> tuple[RoleResult[LightAnswerOutput], bool]:
    """The light answer over `hits` by the model, or, when the model fails, by the
    extractive roles; the flag says the model failed."""
    items = [to_item(h) for h in hits]
    try:
        with run.timed("light_answer"):
            return run.model.light_answer(run.question, items, pool, now=run.as_of), False
    except LLMAuthError:
        raise
    except LLMError as exc:
        run.model_failed("light_answer", exc, "extractive answer")
        with run.timed("light_answer"):
            res = run.extractive().light_answer(run.question, items, pool, now=run.as_of)
        run.fallback = "extractive"
        return no_cost(res), True


def _deep_fallback(run: Run, step: DeepAnswerStep, exc: LLMError) -> DeepAnswerOutcome:
    """The deep answer failed: the round's light answer stands in, else one asked now
    over the light summaries (by the model, else extractively)."""
    answer = run.light_answers.get(step.round)
    run.model_failed("deep_answer", exc, "light answer")
    cost = Cost()
    if answer is None:
        hits = run.light_hits(step.round, run.question, run.k)
        res, _ = light_answer(run, hits, list(step.pool))
        answer, cost = res.output.answer, run.account(res)
    if run.fallback is None:
        run.fallback = "light"
    run.round(step.round).answered_light = True
    return DeepAnswerOutcome(answer, fallback=True, cost=cost)


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


def to_item(hit: Hit) -> ContextItem:
    """A hit as a role sees it: id, text and its dates."""
    return ContextItem(id=hit.id, text=hit.text, time_start=hit.time_start, time_end=hit.time_end)
