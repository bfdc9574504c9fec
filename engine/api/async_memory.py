"""`AsyncMemory`: the `Memory` API as coroutines, for asyncio applications.

Every public `Memory` method has a coroutine twin of the same name, parameters and docstring
that runs the sync method on a bounded thread pool (`loop.run_in_executor`), so the event loop
never blocks on LanceDB, Tantivy, the embedder or a model call. The twins are generated from
the sync methods, one line each (`add = _twin(Memory.add)`), rather than written out again: a
second copy of the API would drift (mem0's sync and async add paths did). `ParamSpec` carries
each method's parameters to type checkers and IDEs, and `inspect.signature` reports them at run
time; a test fails when `Memory` gains a public method that has no twin here.

Concurrency is `Memory`'s own, which is thread-safe: reads (`search`, `ask`, `context`, ...) run
in parallel, one pool thread each; writes are serialised by the ingestor's lock and the store's
write lock, so concurrent `add` calls never interleave within a call, and one task's successive
adds keep their order. The pool bounds how many calls run at once (`max_workers`, default
`DEFAULT_WORKERS`); further calls wait in its queue, and a waiting call whose task is cancelled
never runs.

`aclose()` (or leaving `async with`) refuses new calls at once, waits for the calls already
submitted to finish, then closes the `Memory`. Opening runs on the calling thread, like
`Memory(...)`: it opens the store's tables and loads no model, so it is quick.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from hymem.api.memory import Memory
from hymem.core.config import MemoryConfig
from hymem.core.errors import StoreClosedError
from hymem.core.validation import check_k
from hymem.embed.embedders import Embedder
from hymem.llm.roles import Roles

# Threads running Memory calls at once. Calls mostly wait on I/O (LanceDB, a model server), so
# more than the cores pays off, while the bound keeps a burst of requests from opening a thread
# (and a model call) each.
DEFAULT_WORKERS = 8

P = ParamSpec("P")
R = TypeVar("R")


def _twin(
    method: Callable[Concatenate[Memory, P], R],
) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, R]]:
    """The coroutine twin of a `Memory` method: same name, parameters and docstring; the call
    runs on the AsyncMemory's thread pool."""

    async def twin(self: AsyncMemory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._run(method, *args, **kwargs)

    functools.update_wrapper(twin, method, assigned=("__name__", "__doc__"))  # + __wrapped__
    twin.__qualname__ = f"AsyncMemory.{method.__name__}"
    return twin


class AsyncMemory:
    """`Memory` for asyncio: the same methods, as coroutines, safe to call concurrently from
    one event loop. `max_workers` bounds the threads running calls (default 8)."""

    def __init__(
        self,
        path: str | Path,
        *,
        llm: str | None = None,
        embedder: str | Embedder | None = None,
        config: MemoryConfig | None = None,
        read_only: bool = False,
        roles: Roles | None = None,
        storage_options: Mapping[str, str] | None = None,
        create: bool | None = None,
        max_workers: int = DEFAULT_WORKERS,
    ) -> None:
        check_k(max_workers, name="max_workers")
        self._memory = Memory(
            path,
            llm=llm,
            embedder=embedder,
            config=config,
            read_only=read_only,
            roles=roles,
            storage_options=storage_options,
            create=create,
        )
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="hymem-async")
        self._closing: asyncio.Future[None] | None = None

    # --- lifecycle -----------------------------------------------------------------------
    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._close(error=exc is not None)

    async def aclose(self) -> None:
        """Refuse new calls, wait for those in flight, then close the Memory. Idempotent;
        concurrent callers all wait for the one close."""
        await self._close(error=False)

    async def _close(self, *, error: bool) -> None:
        if self._closing is None:
            loop = asyncio.get_running_loop()
            self._closing = loop.run_in_executor(None, self._shutdown, error)
        # shielded: a caller cancelled while waiting must not leave the store half-closed
        await asyncio.shield(self._closing)

    def _shutdown(self, error: bool) -> None:
        """On a helper thread: drain the pool, then close the Memory."""
        self._executor.shutdown(wait=True)
        if not error:
            self._memory.close()
            return
        try:  # `Memory.close` skips its optional sleep while an error unwinds: say so
            raise _ClosingAfterError
        except _ClosingAfterError:
            self._memory.close()

    @property
    def closed(self) -> bool:
        return self._closing is not None

    @property
    def memory(self) -> Memory:
        """The sync `Memory` underneath (its properties: `config`, `path`, `read_only`, ...).
        Calling its methods from the event loop blocks the loop: use the twins instead."""
        return self._memory

    async def _run(
        self, method: Callable[Concatenate[Memory, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> R:
        if self._closing is not None:
            raise StoreClosedError("this AsyncMemory was closed")
        loop = asyncio.get_running_loop()
        call = functools.partial(method, self._memory, *args, **kwargs)
        # in the caller's context: the task's current span is the parent of the call's span
        return await loop.run_in_executor(self._executor, contextvars.copy_context().run, call)

    # --- the twins, one per public Memory method (see the module docstring) ---------------
    add = _twin(Memory.add)
    flush = _twin(Memory.flush)
    pending = _twin(Memory.pending)
    search = _twin(Memory.search)
    ask = _twin(Memory.ask)
    context = _twin(Memory.context)
    traces = _twin(Memory.traces)
    sleep = _twin(Memory.sleep)
    history = _twin(Memory.history)
    restore = _twin(Memory.restore)
    stats = _twin(Memory.stats)
    replay = _twin(Memory.replay)
    users = _twin(Memory.users)
    reindex = _twin(Memory.reindex)
    optimize = _twin(Memory.optimize)
    refresh = _twin(Memory.refresh)
    get = _twin(Memory.get)
    get_all = _twin(Memory.get_all)
    profile = _twin(Memory.profile)
    audit = _twin(Memory.audit)
    update = _twin(Memory.update)
    delete = _twin(Memory.delete)
    erase_user = _twin(Memory.erase_user)
    export = _twin(Memory.export)
    import_records = _twin(Memory.import_records)
    backfill = _twin(Memory.backfill)
    import_chat = _twin(Memory.import_chat)


class _ClosingAfterError(Exception):
    """Raised and caught around `Memory.close()` when an `async with` body failed, so that
    close sees an error unwinding (as a sync `with` would) and skips `sleep_on_close`."""


__all__ = ["DEFAULT_WORKERS", "AsyncMemory"]
