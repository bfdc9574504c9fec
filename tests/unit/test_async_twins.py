"""`AsyncMemory` mirrors `Memory`: every public method has a coroutine twin with the same
signature and docstring. When you add a public method to `Memory`, this test tells you to add
its twin (one line in hymem/async_memory.py: `name = _twin(Memory.name)`)."""

from __future__ import annotations

import inspect

from hymem import AsyncMemory, Memory

# Sync-only members with an async counterpart of another name.
RENAMED = {"close": "aclose"}


def _public_methods(cls: type) -> dict[str, object]:
    return {
        name: fn
        for name, fn in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


def test_every_public_memory_method_has_a_coroutine_twin() -> None:
    sync = _public_methods(Memory)
    missing = sorted(
        RENAMED.get(n, n)
        for n in sync
        if not inspect.iscoroutinefunction(getattr(AsyncMemory, RENAMED.get(n, n), None))
    )
    assert missing == [], (
        f"add to AsyncMemory: {', '.join(f'{n} = _twin(Memory.{n})' for n in missing)}"
    )


def test_twins_keep_the_sync_signature_and_docstring() -> None:
    for name in set(_public_methods(Memory)) - set(RENAMED):
        twin, method = getattr(AsyncMemory, name), getattr(Memory, name)
        assert inspect.signature(twin) == inspect.signature(method), name
        assert twin.__doc__ == method.__doc__, name
        assert twin.__qualname__ == f"AsyncMemory.{name}"


def test_no_twin_outlives_its_sync_method() -> None:
    extra = set(_public_methods(AsyncMemory)) - set(_public_methods(Memory)) - set(RENAMED.values())
    assert extra == set()
