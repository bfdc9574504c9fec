"""The systems a LoCoMo run compares, built by name: hymem and its ablations (`systems`) beside
the baselines (`baselines`), all answering through the same `System` protocol."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hymem.core.errors import UserInputError
from hymem.evaluation.baselines import FullContextSystem, NaiveRagSystem
from hymem.evaluation.systems import HymemSystem

# Naive RAG takes any k, so it can be given as many context tokens as hymem spends.
_NAIVE_RAG = re.compile(r"naive-rag-k([1-9][0-9]{0,3})")
NAIVE_RAG_MAX_K = 1000


def build_systems(names: Iterable[str]) -> list[Any]:
    """Systems by name, in the given order; UserInputError names the unknown ones.

    `naive-rag-k<N>` (1 <= N <= 1000) is naive RAG over the N closest turns."""
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
    for name in names:
        match = _NAIVE_RAG.fullmatch(name)
        if match and int(match[1]) <= NAIVE_RAG_MAX_K and name not in factories:
            factories[name] = lambda k=int(match[1]): NaiveRagSystem(k)
    unknown = [n for n in names if n not in factories]
    if unknown or not names:
        raise UserInputError(
            f"unknown system(s) {unknown or names!r}: choose from {', '.join(factories)} "
            f"or naive-rag-k<N> (N from 1 to {NAIVE_RAG_MAX_K})"
        )
    return [factories[n]() for n in dict.fromkeys(names)]


__all__ = ["build_systems"]
