"""Bounded parallel calls for the read path (selection batches) and sleep (update queues)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, TypeVar, overload

T = TypeVar("T")
R = TypeVar("R")


@overload
def map_concurrent(
    fn: Callable[[T], R],
    items: Sequence[T],
    max_workers: int,
    *,
    return_exceptions: Literal[False] = False,
) -> list[R]: ...


@overload
def map_concurrent(
    fn: Callable[[T], R],
    items: Sequence[T],
    max_workers: int,
    *,
    return_exceptions: Literal[True],
) -> list[R | Exception]: ...


def map_concurrent(
    fn: Callable[[T], R],
    items: Sequence[T],
    max_workers: int,
    *,
    return_exceptions: bool = False,
) -> list[R] | list[R | Exception]:
    """`[fn(x) for x in items]` with at most `max_workers` running at once, results in input
    order. With `return_exceptions`, a failed item's exception takes its place (like
    asyncio.gather) so one failed batch does not discard the others; otherwise the first
    failure (in input order) is raised after every item has finished, so no call is left running
    unobserved."""
    if max_workers < 1:
        raise ValueError("max_workers must be >= 1")
    if not items:
        return []
    if len(items) == 1 or max_workers == 1:
        futures_results: list[R | Exception] = []
        for item in items:
            try:
                futures_results.append(fn(item))
            except Exception as failure:
                if not return_exceptions:
                    raise
                futures_results.append(failure)
        return futures_results
    # A pool per call, joined before returning: no thread outlives the call that needed it.
    workers = min(max_workers, len(items))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hymem-llm") as pool:
        # each item runs in a copy of the caller's context: its spans are the caller's children
        futures = [pool.submit(contextvars.copy_context().run, fn, item) for item in items]
    results: list[R | Exception] = []
    for fut in futures:
        exc = fut.exception()
        if exc is None:
            results.append(fut.result())
        elif return_exceptions and isinstance(exc, Exception):
            results.append(exc)
        else:
            raise exc
    return results
