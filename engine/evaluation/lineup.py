"""The systems a LoCoMo run compares, built by name: hymem and its ablations (`systems`) beside
the baselines (`baselines`), all answering through the same `System` protocol."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hymem.core.errors import UserInputError
from hymem.evaluation.baselines import FullContextSystem, NaiveRagSystem
from hymem.evaluation.systems import HymemSystem


def build_systems(names: Iterable[str]) -> list[Any]:
    """Systems by name, in the given order; UserInputError names the unknown ones."""
    factories: dict[str, Any] = {
        "hymem": lambda: HymemSystem("hymem", depth="auto"),
        "light-only": lambda: HymemSystem("light-only", depth="light"),
        "deep-only": lambda: HymemSystem("deep-only", depth="deep"),
        "no-reflection": lambda: HymemSystem("no-reflection", depth="auto", max_iterations=0),
        "full-context": FullContextSystem,
        "naive-rag-k3": lambda: NaiveRagSystem(3),
        "naive-rag-k5": lambda: NaiveRagSystem(5),
        "naive-rag-k10": lambda: NaiveRagSystem(10),
    }
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in factories]
    if unknown or not names:
        raise UserInputError(
            f"unknown system(s) {unknown or names!r}: choose from {', '.join(factories)}"
        )
    return [factories[n]() for n in dict.fromkeys(names)]


__all__ = ["build_systems"]
