"""The retrieval-only sections of the LoCoMo report (pure): evidence recall@k with the tokens of
each top-k, and recall at hymem's own per-question token budgets."""

from __future__ import annotations

from typing import Any

from hymem.evaluation.markdown import fmt_num, fmt_pct, fmt_recall_tokens, md_table
from hymem.evaluation.metrics import CATEGORY_NAMES, CATEGORY_TITLES, TABLE_CATEGORIES

COLUMNS = [(CATEGORY_NAMES[c], CATEGORY_TITLES[c]) for c in TABLE_CATEGORIES] + [
    ("overall", "Overall")
]
LEVEL_LABELS: dict[tuple[str, str], str] = {
    ("summary", "source"): "summary",
    ("segment", "source"): "segment",
    ("turn", "source"): "turn (flat, raw turns)",
    ("summary", "segment"): "summary, segment-credited (old measure: every turn of its segment)",
}
SYSTEM_LABELS: dict[str, str] = {
    "hymem-light": "hymem-light (its budgeted summaries)",
    "hymem-deep": "hymem-deep (its selected segments)",
    "dense-turn": "dense-turn (naive RAG's ranking)",
    "bm25-turn": "bm25-turn",
    "hybrid-turn": "hybrid-turn (RRF of the two)",
}


def recall_at_k_section(retrieval: dict[str, Any]) -> list[str]:
    """recall@k beside the mean tokens of the same top-k, per level and mode."""
    rows = retrieval.get("rows") or []
    if not rows:
        return []
    ks = sorted({r["k"] for r in rows})
    table: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for level_key in LEVEL_LABELS:
        for r in rows:
            if (r["level"], r.get("credit", "source")) == level_key:
                table.setdefault((LEVEL_LABELS[level_key], r["mode"]), {})[r["k"]] = r
    header = ["Level", "Mode"]
    for k in ks:
        header += [f"recall@{k}", f"tokens@{k}"]
    body = []
    for (level, mode), by_k in table.items():
        cells = [level, mode]
        for k in ks:
            r = by_k.get(k) or {}
            cells += [fmt_pct(r.get("recall")), fmt_num(r.get("tokens"), 0)]
        body.append(cells)
    return [
        f"## Retrieval only: evidence recall@k ({retrieval['questions']} questions)",
        "",
        *md_table(header, body),
        "",
        "tokens@k: mean tokens of the top-k hits' text (summary sentences, raw segment lines, "
        "`Speaker: text` turns). A summary hit is credited with its own source turns, a segment "
        "hit with its turns. The segment-credited rows keep the pre-provenance figure for "
        "comparison only. Turn rows are the flat baselines over raw turns: dense is naive "
        "RAG's ranking, lexical is BM25 over lowercased words, hybrid their RRF.",
        "",
    ]


def budget_section(retrieval: dict[str, Any]) -> list[str]:
    """At hymem's light and deep budgets: every system's recall and the tokens it used."""
    budget = retrieval.get("budget")
    if not budget or not budget.get("questions"):
        return []
    lines = [
        f"## Retrieval at hymem's cost: evidence recall at matched token budgets "
        f"({budget['questions']} questions)",
        "",
        "Per question, the context hymem's light path reads (its budgeted summaries) and the one "
        "its deep path reads (the segments its select role chose) set two token budgets. Each "
        "flat baseline over raw turns gets the longest prefix of its ranking that fits THAT "
        "question's budget: a turn that does not fit ends the cut, and when the first turn "
        "alone does not fit the baseline gets nothing. Each cell: evidence recall in % (mean "
        "context tokens actually used).",
        "",
    ]
    for depth, block in budget["depths"].items():
        ref = block["systems"].get(block["reference"]) or {}
        per_hit = ref.get("turns_per_unit")
        lines += [
            f"### At hymem's {depth} budget (mean {fmt_num(block['budget_tokens'], 0)} tokens; "
            f"{block['zero_budget']} questions with an empty {depth} context)",
            "",
        ]
        if per_hit is not None:
            lines += [
                f"{block['reference']} read {fmt_num(ref['units'], 1)} hits a question, each "
                f"standing for {fmt_num(per_hit, 2)} turns on average (the turns its text was "
                "drawn from: all that a hit is credited with).",
                "",
            ]
        body = [
            [
                SYSTEM_LABELS.get(name, name),
                *_category_cells(s),
                fmt_num(s["units"], 1),
                "–" if name == block["reference"] else str(s["first_over"]),
                str(s["n"]),
            ]
            for name, s in block["systems"].items()
        ]
        header = ["System", *[t for _, t in COLUMNS], "Units", "First unit over budget", "n"]
        lines += [*md_table(header, body), ""]
    return lines


def _category_cells(system: dict[str, Any]) -> list[str]:
    cats = {**system["by_category"], "overall": system}
    return [
        fmt_recall_tokens((cats.get(c) or {}).get("recall"), (cats.get(c) or {}).get("tokens"))
        for c, _ in COLUMNS
    ]


__all__ = ["budget_section", "recall_at_k_section"]
