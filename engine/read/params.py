"""What one ask (or context call) is about, checked once at the edge into a typed `AskParams`.

`Memory.ask` and `Memory.context` -- and through them `AsyncMemory`, the REST server's
`/v1/ask` and `/v1/context` and the MCP server's `ask_memory` -- build it with `ask_params`, the
one function that checks an ask's arguments (a typed `UserInputError` naming the argument). The
`Reader`, its `Run` and the scheduler take it as given. Sizes left out come from the config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hymem.core.config import MemoryConfig
from hymem.core.errors import UserInputError
from hymem.core.filters import Filter, scoped
from hymem.core.validation import check_iterations, check_k, check_query, check_user_id
from hymem.read.scheduler import DEPTHS, Depth, ReadPlan
from hymem.search.scope import SearchScope, as_of_utc


@dataclass(frozen=True, slots=True)
class AskParams:
    """One checked ask: the question, the scope its searches share (the user, `as_of` as
    their upper time bound, the metadata filter; each search sets its own k and level), how
    far it may read, and the moment it is asked (naive UTC; None means now, unbounded)."""

    question: str
    scope: SearchScope
    plan: ReadPlan
    as_of: datetime | None = None

    @property
    def user_id(self) -> str:
        return self.scope.user_id


def ask_params(
    question: object,
    *,
    user_id: object,
    config: MemoryConfig,
    depth: object = "auto",
    k: object = None,
    N: object = None,
    d: object = None,
    max_iterations: object = None,
    as_of: object = None,
    filters: Mapping[str, Any] | Filter | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
) -> AskParams:
    """The checked arguments of `Memory.ask` / `Memory.context` (UserInputError otherwise);
    k, N, d and max_iterations left out are the config's."""
    user = check_user_id(user_id)
    text = check_query(question, max_chars=config.max_query_chars, name="question")
    plan = ReadPlan(
        depth=check_depth(depth),
        k=_size("k", k, config.k, config.max_k),
        n_deep=_size("N", N, config.n_deep, config.max_k),
        batch=_size("d", d, config.select_batch, config.max_k),
        max_iterations=(
            config.max_iterations if max_iterations is None else check_iterations(max_iterations)
        ),
        light_tokens=config.light_tokens if k is None else 0,  # an explicit k is a count
    )
    moment = as_of_utc(as_of)
    chosen = scoped(filters, agent_id=agent_id, run_id=run_id)
    scope = SearchScope(user, until=moment, filters=chosen, as_of=moment)
    return AskParams(text, scope, plan, moment)


def check_depth(depth: object) -> Depth:
    if depth not in DEPTHS:
        raise UserInputError(f"unknown depth {depth!r}: use auto, light or deep")
    return depth


def _size(name: str, value: object, default: int, maximum: int) -> int:
    return default if value is None else check_k(value, name=name, maximum=maximum)


__all__ = ["AskParams", "ask_params", "check_depth"]
