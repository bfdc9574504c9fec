"""The fact-change suite's outcomes and report (`fact_change.py` measures; this module classifies
a context, keeps each system's outcomes and prints and serialises them)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fact_change_world import Question, World, value_pattern
from rich.console import Console
from rich.table import Table

CLASSES = ("current_only", "stale_without_current", "both", "neither")
# The targets: shares of questions, and active duplicates per 100 facts.
TARGETS = {"current_only": 0.95, "stale_without_current": 0.03, "active_dups_per_100_facts": 2.0}
console = Console(width=None if sys.stdout.isatty() else 150)  # a saved report stays one table


@dataclass
class Outcome:
    """One question as one system answered it: its class and the context's size."""

    cls: str
    tokens: int
    future: bool  # the context names a value first said after `as_of` (a leak)
    # current only when a text (a line) naming the true value may also name an old one
    # ("I left Lisbon, I'm in Porto now"): what is left is stale texts of their own
    current_by_text: bool = False


@dataclass
class SystemResult:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)
    dups: Counter[str] = field(default_factory=Counter)  # per slot kind
    stale_active: Counter[str] = field(default_factory=Counter)
    records: int = 0  # active summaries (hymem) or turns (flat)

    def share(self, cls: str, idx: Iterable[int] | None = None) -> float:
        picked = [self.outcomes[i] for i in idx] if idx is not None else self.outcomes
        return sum(o.cls == cls for o in picked) / max(len(picked), 1)

    @property
    def current_by_text(self) -> float:
        return sum(o.current_by_text for o in self.outcomes) / max(len(self.outcomes), 1)

    @property
    def mean_tokens(self) -> float:
        return float(np.mean([o.tokens for o in self.outcomes])) if self.outcomes else 0.0


def outcome(text: str, q: Question, tokens: int) -> Outcome:
    """One context for one question, classified by whole-word value matching."""
    found = {v for v in q.values if value_pattern(q.kind, v).search(text)}
    current, stale = q.truth in found, bool(found - {q.truth})
    cls = {
        (True, False): "current_only",
        (False, True): "stale_without_current",
        (True, True): "both",
        (False, False): "neither",
    }[(current, stale)]
    future = any(v in found for v, at in zip(q.values, q.said_at, strict=True) if at > q.as_of)
    by_text = current
    if cls == "both":
        truth = value_pattern(q.kind, q.truth)
        stale_only = [
            line
            for line in text.splitlines()
            if not truth.search(line)
            and any(value_pattern(q.kind, v).search(line) for v in found - {q.truth})
        ]
        by_text = not stale_only
    return Outcome(cls, tokens, future, by_text)


def facts_by_kind(world: World) -> Counter[str]:
    return Counter(kind for u in world.users for kind, s in u.slots.items() for _ in s.values)


def per_100(n: int, facts: int) -> float:
    return 100 * n / max(facts, 1)


def summary_table(results: list[SystemResult], facts: int) -> Table:
    t = Table(title="Fact change: light-path contexts at as_of (whole-word value matching)")
    t.add_column("system")
    for col in (
        "questions",
        "current only (>= 0.95)",
        "stale w/o current (<= 0.03)",
        "both",
        "neither",
        "current only, by text",
        "active dups / 100 facts (<= 2)",
        "stale active / 100 facts",
        "future leaks",
        "mean context tokens",
    ):
        t.add_column(col, justify="right")
    for r in results:
        t.add_row(
            r.name,
            str(len(r.outcomes)),
            *(f"{r.share(c):.3f}" for c in CLASSES),
            f"{r.current_by_text:.3f}",
            *(
                (
                    f"{per_100(sum(r.dups.values()), facts):.1f}",
                    f"{per_100(sum(r.stale_active.values()), facts):.1f}",
                )
                if r.records
                else ("n/a", "n/a")  # the oracle keeps no records
            ),
            str(sum(o.future for o in r.outcomes)),
            f"{r.mean_tokens:.0f}",
        )
    return t


def group_table(results: list[SystemResult], world: World, by: str) -> Table:
    """Shares per slot kind (with duplicates per 100 of its facts) or per question moment."""
    facts = facts_by_kind(world) if by == "kind" else Counter()
    order = {"first": 0, "between": 1, "end": 2}  # moments in time order; kinds by name
    groups = sorted({getattr(q, by) for q in world.questions}, key=lambda g: (order.get(g, 3), g))
    t = Table(title=f"By {by} (current = current only, stale = stale without current)")
    for col in (by, "questions", *(["facts"] if facts else [])):
        t.add_column(col, justify="left" if col == by else "right")
    cols = ("current", "stale", "dups/100") if facts else ("current", "stale", "both")
    for r in results:
        for col in cols:
            t.add_column(f"{r.name}\n{col}", justify="right")
    for group in groups:
        idx = [i for i, q in enumerate(world.questions) if getattr(q, by) == group]
        cells = [group, str(len(idx)), *([str(facts[group])] if facts else [])]
        for r in results:
            cells += [
                f"{r.share('current_only', idx):.2f}",
                f"{r.share('stale_without_current', idx):.2f}",
                (f"{per_100(r.dups[group], facts[group]):.0f}" if r.records else "n/a")
                if facts
                else f"{r.share('both', idx):.2f}",
            ]
        t.add_row(*cells)
    return t


def result_json(r: SystemResult, world: World, facts: int) -> dict[str, Any]:
    kinds = facts_by_kind(world)
    return {
        "questions": len(r.outcomes),
        **{c: r.share(c) for c in CLASSES},
        "current_only_by_text": r.current_by_text,
        "active_dups_per_100_facts": per_100(sum(r.dups.values()), facts),
        "stale_active_per_100_facts": per_100(sum(r.stale_active.values()), facts),
        "records": r.records,
        "future_leaks": sum(o.future for o in r.outcomes),
        "mean_context_tokens": r.mean_tokens,
        "by_kind": {
            k: {
                "questions": sum(q.kind == k for q in world.questions),
                "facts": n,
                **{
                    c: r.share(c, [i for i, q in enumerate(world.questions) if q.kind == k])
                    for c in CLASSES
                },
                "dups_per_100_facts": per_100(r.dups[k], n),
                "stale_active_per_100_facts": per_100(r.stale_active[k], n),
            }
            for k, n in sorted(kinds.items())
        },
    }
