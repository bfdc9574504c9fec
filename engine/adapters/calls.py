"""Calling a hymem method from an adapter's async code, whatever the caller handed in."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any


async def call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """A method of a `Memory` or `Client` (sync: run off the event loop) or of an
    `AsyncMemory` or `AsyncClient` (awaited)."""
    if inspect.iscoroutinefunction(method):
        return await method(*args, **kwargs)
    return await asyncio.to_thread(method, *args, **kwargs)


__all__ = ["call"]
