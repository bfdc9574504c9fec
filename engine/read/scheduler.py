"""HyMem Algorithm 1 as data: a generator that yields steps and receives their outcomes.

The scheduler decides everything the read path decides -- escalation, how many selection
batches fit the budget, reflection, the next round's query, stopping -- and does no I/O, so a
test can drive it with scripted outcomes. The reader executes each step against the store,
the searcher and the model roles and sends back what happened:

    gen = schedule(q0, ReadPlan(depth="auto", k=10, n_deep=30, batch=10), budget=b)
    step = next(gen)
    while True:
        outcome = execute(step)          # LightStep -> LightOutcome, DeepRetrieveStep -> ...
        try:
            step = gen.send(outcome)
        except StopIteration as stop:
            result: ScheduleResult = stop.value
            break

Decisions that the paper leaves open, written down here:
  * Reflection follows Algorithm 1: it runs after every round, the last included (its verdict
    is the answer's final completeness); `max_iterations=0` means one round and no reflection.
  * An incomplete reflection without a new question, or with one any round of this ask already
    asked (compared without case, spacing and punctuation), stops the loop: the same query would
    only retrieve the same context again. A small model's reflection cycles ("q", "q + a
    caption", "q" again); without the earlier rounds in the comparison, each cycle cost a full
    round.
  * A deep answer that no reflection checked counts as complete (no verdict says otherwise).
  * An answer a fallback produced is never complete: a light answer's fallback escalates,
    and a deep answer's fallback (an earlier answer, the light answer standing in, or "unable
    to answer") stays incomplete whatever a reflection says of it. A reflection's fallback is
    no verdict: the rounds stop and the answer stays as complete as an unchecked one. So
    `complete=True` always means a role (the model, or the extractive roles when they are
    the backend) said so of an answer no fallback produced.
"""

from __future__ import annotations

import math
import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from hymem.read.budget import Budget

Depth = Literal["auto", "light", "deep"]
DEPTHS: tuple[Depth, ...] = ("auto", "light", "deep")
EscalationReason = Literal["verdict", "fallback", "forced"]


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """How far one ask may read: its depth, the light top-k, the deep top-N, the selection
    batch d and the reflection rounds T. Built checked at the API edge
    (`hymem.read.params.ask_params`: sizes >= 1 and within max_k, 0 <= T <= 20); the scheduler
    takes it as given."""

    depth: Depth = "auto"
    k: int = 10
    n_deep: int = 30
    batch: int = 10
    max_iterations: int = 3
    light_tokens: int = 0  # > 0: the light path fills this many tokens instead of reading k


# ---- steps (what the reader must do next) ------------------------------------------------


@dataclass(frozen=True)
class LightStep:
    """Retrieve the light summaries for `query` and ask the light-answer role."""

    round: int
    query: str
    k: int
    pool: tuple[str, ...] = ()  # earlier rounds' answers


@dataclass(frozen=True)
class DeepRetrieveStep:
    """Coarse recall: retrieve the top-N summaries for `query` (no model call)."""

    round: int
    query: str
    n: int
    reason: EscalationReason = "verdict"  # why: the light verdict, a fallback, or forced


@dataclass(frozen=True)
class SelectStep:
    """Judge the first `max_candidates` coarse candidates in batches of `batch_size`
    concurrently; with `use_model=False`, take the first `batch_size` candidates as chosen."""

    round: int
    query: str
    batch_size: int
    max_candidates: int
    use_model: bool = True


@dataclass(frozen=True)
class DeepAnswerStep:
    """Read the Level-2 segments linked from the chosen summaries; ask the deep-answer role.
    `tokens_left` (None: unlimited) bounds the further segments holding a chosen summary's
    turns its own segment lacks (a merged repeat's); its own segments are always read."""

    round: int
    pool: tuple[str, ...] = ()
    tokens_left: int | None = None


@dataclass(frozen=True)
class ReflectStep:
    """Ask the reflect role whether `answer` completes the original question."""

    round: int
    answer: str


Step = LightStep | DeepRetrieveStep | SelectStep | DeepAnswerStep | ReflectStep


# ---- outcomes (what the reader sends back) -------------------------------------------------


@dataclass(frozen=True)
class Cost:
    calls: int = 0
    tokens: int = 0


@dataclass(frozen=True)
class LightOutcome:
    answer: str
    complete: bool
    fallback: bool = False
    cost: Cost = field(default_factory=Cost)


@dataclass(frozen=True)
class RetrieveOutcome:
    count: int  # candidates found


@dataclass(frozen=True)
class SelectOutcome:
    chosen: int  # summaries chosen (after dropping ids that were not candidates)
    fallback: bool = False
    cost: Cost = field(default_factory=Cost)


@dataclass(frozen=True)
class DeepAnswerOutcome:
    answer: str
    fallback: bool = False
    cost: Cost = field(default_factory=Cost)
    segments_left_out: int = 0  # further segments the tokens left did not fit


@dataclass(frozen=True)
class ReflectOutcome:
    complete: bool
    new_question: str | None = None
    fallback: bool = False
    cost: Cost = field(default_factory=Cost)


Outcome = LightOutcome | RetrieveOutcome | SelectOutcome | DeepAnswerOutcome | ReflectOutcome


# ---- result ------------------------------------------------------------------------------


@dataclass
class RoundRecord:
    """What one round did; the reader adds the ids it retrieved for the trace."""

    index: int
    query: str
    path: Literal["light", "deep"] = "light"
    light_complete: bool | None = None
    escalated: bool = False
    escalation_reason: EscalationReason | None = None
    select_limited: bool = False  # the budget trimmed the selection stage
    answer: str = ""
    reflect_complete: bool | None = None
    new_question: str | None = None


@dataclass
class ScheduleResult:
    answer: str
    path: Literal["light", "deep"]
    escalated: bool
    escalation_reason: EscalationReason | None
    complete: bool
    iterations: int
    budget_exhausted: bool
    rounds: list[RoundRecord]
    pool: list[str]


# ---- the algorithm -----------------------------------------------------------------------


def schedule(
    question: str, plan: ReadPlan = ReadPlan(), *, budget: Budget | None = None
) -> Generator[Step, Outcome, ScheduleResult]:
    """HyMem Algorithm 1 (ARCHITECTURE §5) with adaptive depth and a per-ask budget.

    Deliberately one generator of ~85 lines: each round's light answer, escalation, deep read
    and reflection appear in the order of the paper's pseudo-code, so the two can be read side
    by side; splitting the phases into `yield from` sub-generators would scatter the state they
    share (the round record, the answer pool, completeness, the budget) across signatures."""
    depth, k, n_deep, batch = plan.depth, plan.k, plan.n_deep, plan.batch
    max_iterations = plan.max_iterations
    budget = budget if budget is not None else Budget()
    rounds_allowed = max(1, max_iterations)
    pool: list[str] = []
    rounds: list[RoundRecord] = []
    query = question
    asked = {question_key(question)}
    complete = False

    for index in range(rounds_allowed):
        rec = RoundRecord(index=index, query=query)
        rounds.append(rec)
        stand_in = False  # this round's answer came from a fallback: never complete
        escalate = escalation(depth, None)  # "forced" for depth deep, decided before reading

        if depth != "deep":
            light = _expect((yield LightStep(index, query, k, tuple(pool))), LightOutcome)
            budget.charge(light.cost.calls, light.cost.tokens)
            rec.answer, rec.light_complete = light.answer, light.complete
            complete = light.complete and not light.fallback
            stand_in = light.fallback
            reason = escalation(depth, light)
            if reason is not None:
                if budget.affords(1):
                    escalate = reason
                else:
                    budget.stop(f"round {index}: escalation skipped ({budget.describe()})")

        if escalate is not None:
            rec.escalated, rec.escalation_reason, rec.path = True, escalate, "deep"
            found = _expect(
                (yield DeepRetrieveStep(index, query, n_deep, escalate)), RetrieveOutcome
            )
            select_step = _plan_selection(index, query, found.count, batch, budget)
            if select_step is not None:
                rec.select_limited = select_step.max_candidates < found.count
                chosen = _expect((yield select_step), SelectOutcome)
                budget.charge(chosen.cost.calls, chosen.cost.tokens)
            deep = _expect(
                (yield DeepAnswerStep(index, tuple(pool), budget.tokens_left)), DeepAnswerOutcome
            )
            if deep.segments_left_out:
                budget.stop(
                    f"round {index}: {deep.segments_left_out} further segments left unread"
                    f" ({budget.describe()})"
                )
            budget.charge(deep.cost.calls, deep.cost.tokens)
            rec.answer = deep.answer
            stand_in = deep.fallback
            complete = not deep.fallback  # unless a reflection says otherwise

        pool.append(rec.answer)
        if max_iterations == 0:
            break
        if not budget.affords(1):
            budget.stop(f"round {index}: reflection skipped ({budget.describe()})")
            break
        verdict = _expect((yield ReflectStep(index, rec.answer)), ReflectOutcome)
        budget.charge(verdict.cost.calls, verdict.cost.tokens)
        rec.reflect_complete, rec.new_question = verdict.complete, verdict.new_question
        if verdict.fallback:  # no verdict: stop, the answer as complete as it was unchecked
            break
        complete = verdict.complete and not stand_in
        if verdict.complete or index + 1 >= rounds_allowed:
            break
        next_query = (verdict.new_question or "").strip()
        if not next_query or question_key(next_query) in asked:
            break
        if not budget.affords(1):
            budget.stop(f"round {index}: next round skipped ({budget.describe()})")
            break
        query = next_query
        asked.add(question_key(query))

    final = rounds[-1]
    first_escalation = next((r for r in rounds if r.escalated), None)
    return ScheduleResult(
        answer=final.answer,
        path=final.path,
        escalated=first_escalation is not None,
        escalation_reason=first_escalation.escalation_reason if first_escalation else None,
        complete=complete,
        iterations=len(rounds),
        budget_exhausted=budget.exhausted,
        rounds=rounds,
        pool=pool,
    )


_WORDS = re.compile(r"\w+")


def question_key(text: str) -> tuple[str, ...]:
    """What makes two questions the same question for retrieval: their words, in order,
    without case, spacing or punctuation ("Where does Alice live?" == "where does alice live")."""
    return tuple(_WORDS.findall(text.casefold()))


def escalation(depth: Depth, light: LightOutcome | None) -> EscalationReason | None:
    """Whether a round reads raw dialogue after its light answer, and why: depth "deep" always
    ("forced": it asks no light answer); "light" never; "auto" when the light answer is not
    complete, by its verdict ("verdict") or because a fallback produced it ("fallback").
    `light` is None where no light answer was asked (it decides nothing then)."""
    if depth == "deep":
        return "forced"
    if depth == "light" or light is None or light.complete:
        return None
    return "fallback" if light.fallback else "verdict"


_O = TypeVar("_O")


def _expect(outcome: object, kind: type[_O]) -> _O:
    """The driver must answer each step with its own outcome type; anything else is a bug."""
    if not isinstance(outcome, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(outcome).__name__}")
    return outcome


def _plan_selection(
    index: int, query: str, count: int, batch: int, budget: Budget
) -> SelectStep | None:
    """Size the selection stage to the calls left, keeping one for the deep answer."""
    if count == 0:
        return None
    needed = math.ceil(count / batch)
    remaining = budget.remaining_calls
    spare = None if remaining is None else remaining - 1  # the deep answer is committed
    if budget.tokens_spent:
        spare = 0
    if spare is None or spare >= needed:
        return SelectStep(index, query, batch, count)
    if spare >= 1:
        budget.stop(f"round {index}: selection trimmed to {spare}/{needed} batches")
        return SelectStep(index, query, batch, spare * batch)
    budget.stop(f"round {index}: selection by similarity only ({budget.describe()})")
    return SelectStep(index, query, batch, min(batch, count), use_model=False)
