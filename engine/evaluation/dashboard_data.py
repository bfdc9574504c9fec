"""The dashboard's numbers, computed without plotly or disk: traces and evaluation records are
normalised into one `Event` shape, then grouped. Kept pure so the numbers the page shows are
unit-tested here and only their drawing is left to the browser test."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from hymem.core.types import RoleUsage
from hymem.evaluation.metrics import CATEGORY_NAMES, mean, percentile
from hymem.read.trace_record import Trace
from pydantic import BaseModel


class Event(BaseModel):
    """One answered question, from a store trace or an evaluation prediction."""

    source: str  # "traces" or "<run name>/<system>"
    path: str  # "light" | "deep" | "none" (baselines without a path)
    escalated: bool
    iterations: int = 0
    category: str | None = None
    time: datetime | None = None
    # 1-based place of the question in the run (dataset order) or of the ask among a store's
    # traces (arrival order): the x axis of escalation by question order.
    order: int | None = None
    tokens: int = 0
    # Answered by the extractive backend: its tokens are counted, but no model spent them.
    extractive: bool = False
    latency_ms: float = 0.0
    f1: float | None = None
    correct: bool | None = None  # judge verdict when present
    rounds_escalated: list[bool] | None = None  # per reflection round, from the trace


def _tokens_of(usage: Mapping[str, RoleUsage]) -> int:
    """Total model tokens over every role of an ask."""
    return sum(u.total_tokens for u in usage.values())


def _latency_of(latency: Mapping[str, float]) -> float:
    """Total ms from a per-stage map: its "total" when given, else the stages' sum."""
    return float(latency["total"]) if "total" in latency else float(sum(latency.values()))


def _time_of(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def _category(value: Any) -> str | None:
    """LoCoMo's numbered categories by name; other labels (LongMemEval types) as given."""
    if isinstance(value, int):
        return CATEGORY_NAMES.get(value, str(value))
    return None if value is None else str(value)


def rounds_escalated(trace: Trace) -> list[bool] | None:
    """Whether each round of the ask escalated, in round order (None without rounds)."""
    if not trace.rounds:
        return None
    return [r.escalated for r in sorted(trace.rounds, key=lambda r: r.index)]


def event_from_trace(trace: Trace, order: int | None = None) -> Event:
    """A stored ask. Older rows may lack the totals, so they are summed from the per-role and
    per-stage maps; an evaluation may have added `category` and `f1` to the trace. `order`:
    its place among the store's asks, oldest first (`traces_in_order`)."""
    f1 = trace.extra.get("f1")
    return Event(
        source="traces",
        path=trace.path or "none",
        escalated=trace.escalated,
        iterations=trace.iterations,
        category=_category(trace.extra.get("category")),
        time=trace.created_at,
        tokens=trace.total_tokens or _tokens_of(trace.usage),
        extractive=trace.backend.startswith("extractive"),
        latency_ms=trace.latency_ms_total or _latency_of(trace.latency_ms),
        f1=float(f1) if isinstance(f1, int | float) else None,
        rounds_escalated=rounds_escalated(trace),
        order=order,
    )


def traces_in_order(traces: Sequence[Trace]) -> list[Event]:
    """A store's asks as events numbered by arrival (creation time, then id)."""
    pos = question_positions((t.created_at.isoformat(), t.trace_id) for t in traces)
    return [event_from_trace(t, pos[(t.created_at.isoformat(), t.trace_id)]) for t in traces]


def event_from_prediction(
    rec: Mapping[str, Any], source: str, trace: Trace | None = None, order: int | None = None
) -> Event:
    """An evaluation answer; its trace (joined by trace_id) adds the per-round detail.
    LoCoMo records carry a numbered `category`, LongMemEval ones a `question_type`; `order`
    is the question's place in the run (`question_positions`)."""
    return Event(
        source=source,
        path=str(rec.get("path") or "none"),
        escalated=bool(rec.get("escalated")),
        iterations=int(rec.get("iterations") or 0),
        category=_category(rec.get("category", rec.get("question_type"))),
        time=_time_of(rec.get("finished_at")),
        tokens=int(rec.get("tokens") or 0),
        extractive=str(rec.get("backend") or "").startswith("extractive"),
        latency_ms=float(rec.get("latency_ms") or 0.0),
        f1=rec.get("f1"),
        correct=rec.get("judge_correct"),
        rounds_escalated=rounds_escalated(trace) if trace else None,
        order=order,
    )


def with_path(events: Iterable[Event]) -> list[Event]:
    """Events of systems that have a light/deep path (escalation is undefined for baselines)."""
    return [e for e in events if e.path in ("light", "deep")]


def escalation_rate(events: Sequence[Event]) -> float | None:
    evs = with_path(events)
    return mean(float(e.escalated) for e in evs)


def escalation_by(events: Sequence[Event], key: str) -> dict[str, tuple[float | None, int]]:
    """{group: (escalation rate, count)} by an Event attribute ("category", "iterations")."""
    groups: dict[str, list[Event]] = {}
    for e in with_path(events):
        value = getattr(e, key)
        if value is not None:
            groups.setdefault(str(value), []).append(e)
    return {g: (escalation_rate(evs), len(evs)) for g, evs in sorted(groups.items())}


def escalation_by_round(events: Sequence[Event]) -> dict[str, tuple[float | None, int]]:
    """{round: (escalation rate, count)}: of the asks that reached round i, the share whose
    round i escalated. Events without per-round detail (no trace) are left out."""
    groups: dict[int, list[bool]] = {}
    for e in with_path(events):
        for i, flag in enumerate(e.rounds_escalated or [], 1):
            groups.setdefault(i, []).append(flag)
    return {str(i): (sum(v) / len(v), len(v)) for i, v in sorted(groups.items())}


def question_positions(keys: Iterable[tuple[Any, ...]]) -> dict[tuple[Any, ...], int]:
    """1-based position of each distinct key in sorted order: the same question asked of
    several systems gets the same place."""
    return {k: i for i, k in enumerate(sorted(set(keys)), 1)}


def escalation_by_order(
    events: Sequence[Event], buckets: int = 20
) -> list[tuple[int, int, float, int]]:
    """(first, last question position, rate, count) over consecutive equal-size windows of
    questions in `order` (events without one last, in their given order): does escalation
    drift along the run, or as a store's history grows? Never wall-clock time, which for an
    evaluation only says when its worker threads got to each question."""
    evs = with_path(events)
    evs.sort(key=lambda e: (e.order is None, e.order or 0))
    if not evs:
        return []
    size = max(1, -(-len(evs) // buckets))
    out = []
    for i in range(0, len(evs), size):
        chunk = evs[i : i + size]
        first = chunk[0].order or i + 1
        last = chunk[-1].order or i + len(chunk)
        out.append((first, last, sum(e.escalated for e in chunk) / len(chunk), len(chunk)))
    return out


def accuracy_by_path(events: Sequence[Event]) -> dict[str, dict[str, float | int | None]]:
    """Mean F1 and judge accuracy of answers that ended on each path, where either exists
    (LoCoMo answers carry an F1, LongMemEval ones only a judge verdict)."""
    out: dict[str, dict[str, float | int | None]] = {}
    for path in ("light", "deep"):
        evs = [e for e in events if e.path == path and (e.f1 is not None or e.correct is not None)]
        if evs:
            out[path] = {
                "n": len(evs),
                "f1": mean(e.f1 for e in evs),
                "judge": mean(float(e.correct) for e in evs if e.correct is not None),
            }
    return out


def key_numbers(events: Sequence[Event]) -> dict[str, float | int | None]:
    """The headline numbers per source, also written into the page as a table."""
    acc = accuracy_by_path(events)
    lat = [e.latency_ms for e in events]
    return {
        "questions": len(events),
        "escalation_rate": escalation_rate(events),
        "mean_f1": mean(e.f1 for e in events),
        "light_f1": acc.get("light", {}).get("f1"),
        "deep_f1": acc.get("deep", {}).get("f1"),
        "mean_tokens": mean(e.tokens for e in events),
        "latency_p50_ms": percentile(lat, 50),
        "latency_p95_ms": percentile(lat, 95),
    }
