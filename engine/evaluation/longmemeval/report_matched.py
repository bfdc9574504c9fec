"""The matched-budget part of a LongMemEval report (pure): per hymem context (light, deep), each
system's recall at that context's per-question token budget, by question type, beside the
tokens it actually used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hymem.evaluation.longmemeval.records import MatchedBudget, RetrievalRecord
from hymem.evaluation.longmemeval.systems import CONTEXT_SYSTEMS, RETRIEVAL_SYSTEMS
from hymem.evaluation.markdown import fmt_num, fmt_pct, fmt_recall_tokens, md_table
from hymem.evaluation.metrics import mean

SCORES: tuple[tuple[str, str], ...] = tuple(
    (level, metric) for level in ("session", "turn") for metric in ("recall_any", "recall_all")
)


def _cell(cuts: Sequence[MatchedBudget]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "n": len(cuts),
        "tokens": mean(c.tokens for c in cuts),
        "budget": mean(c.budget for c in cuts),
        "units": mean(c.units for c in cuts),
        "first_over": sum(1 for c in cuts if c.first_over),
    }
    for level, metric in SCORES:
        scored = [c.metrics[level][metric] for c in cuts if level in c.metrics]
        out[f"{level}_{metric}"] = mean(scored)
        out[f"n_{level}"] = len(scored)
    return out


def matched_summary(records: Sequence[RetrievalRecord], types: Sequence[str]) -> dict[str, Any]:
    """{context: {"budget_tokens", "questions", "systems": {system: {"overall", "by_type"}}}}
    over the scored rows that carry that context's matched cut."""
    out: dict[str, Any] = {}
    for context in CONTEXT_SYSTEMS:
        rows = [r for r in records if r.metrics and context in r.matched]
        if not rows:
            continue
        systems: dict[str, Any] = {}
        names = {r.system for r in rows}
        for system in [context] + [s for s in RETRIEVAL_SYSTEMS if s in names and s != context]:
            mine = [r for r in rows if r.system == system]
            systems[system] = {
                "granularity": mine[0].granularity,
                "overall": _cell([r.matched[context] for r in mine]),
                "by_type": {
                    t: _cell([r.matched[context] for r in mine if r.question_type == t])
                    for t in types
                    if any(r.question_type == t for r in mine)
                },
            }
        own = [r.matched[context] for r in rows if r.system == context]
        out[context] = {
            "budget_tokens": mean(c.budget for c in own),
            "zero_budget": sum(1 for c in own if c.budget == 0),
            "questions": len({r.question_id for r in rows}),
            "systems": systems,
        }
    return out


def matched_section(matched: dict[str, Any], type_titles: dict[str, str]) -> list[str]:
    """One table per hymem context: recall at its budget by type, with tokens used."""
    if not matched:
        return []
    lines = [
        "## Retrieval at hymem's cost: recall at matched token budgets",
        "",
        "Per question, what hymem's light path reads (`hymem-light`: its budgeted summaries) and "
        "what its deep path reads (`hymem-deep`: the segments its select role chose) set two "
        "token budgets. Each flat baseline gets the longest prefix of its ranking that fits "
        "THAT question's budget (a unit that does not fit ends the cut; when the first unit "
        "alone does not fit, it gets nothing: counted under 'First over'). Scores are "
        "recall_any / recall_all over the set of sessions (turns) in the cut, with no k. "
        "Per type: session recall_any in % (mean tokens used); a type without session "
        "evidence counts in the turn columns only.",
        "",
    ]
    for context, block in matched.items():
        systems: dict[str, Any] = block["systems"]
        types = [  # a type without session evidence (SS-assistant) counts in the turn columns
            t
            for t in dict.fromkeys(t for s in systems.values() for t in s["by_type"])
            if any(
                s["by_type"][t]["session_recall_any"] is not None
                for s in systems.values()
                if t in s["by_type"]
            )
        ]
        header = ["System (unit)", *[type_titles.get(t, t) for t in types]]
        header += ["Session any", "Session all", "Turn any", "Turn all", "Tokens used"]
        header += ["Units", "First over", "n"]
        body = [
            _row(system, s, types, reference=system == context) for system, s in systems.items()
        ]
        lines += [
            f"### At {context}'s budget (mean {fmt_num(block['budget_tokens'], 0)} tokens; "
            f"{block['questions']} questions, {block['zero_budget']} with an empty context)",
            "",
            *md_table(header, body),
            "",
        ]
    return lines


def _row(system: str, s: dict[str, Any], types: Sequence[str], *, reference: bool) -> list[str]:
    o = s["overall"]
    by_type = [s["by_type"].get(t, {}) for t in types]
    return [
        f"{system} ({s['granularity']})",
        *[fmt_recall_tokens(c.get("session_recall_any"), c.get("tokens")) for c in by_type],
        *[fmt_pct(o[f"{level}_{metric}"]) for level, metric in SCORES],
        fmt_num(o["tokens"], 0),
        fmt_num(o["units"], 1),
        "–" if reference else str(o["first_over"]),
        str(o["n"]),
    ]


__all__ = ["matched_section", "matched_summary"]
