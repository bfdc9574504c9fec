"""Markdown table cells and tables for the evaluation reports (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def fmt_pct(v: Any) -> str:
    return "–" if v is None else f"{100 * v:.2f}"


def fmt_num(v: Any, digits: int = 1) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def fmt_recall_tokens(recall: Any, tokens: Any) -> str:
    """A recall in % with the mean context tokens that bought it: `45.20 (312)`."""
    return "–" if recall is None else f"{fmt_pct(recall)} ({fmt_num(tokens, 0)})"


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


__all__ = ["fmt_num", "fmt_pct", "fmt_recall_tokens", "md_table"]
