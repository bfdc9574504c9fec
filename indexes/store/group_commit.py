"""Group commit: calls that arrive while a commit is in flight are written by the next one.

On an object store every `add()` is a LanceDB commit of the turns table: about six requests in
a row (the lease fence, the data file, the version listing, the transaction, the manifest, a
last listing; ~180 ms at 20 ms a request), and a process's writes take one lock. A worker
serving many users at once therefore committed one add at a time while the others queued
behind the lock. Here the first caller leads: it commits its own item; callers arriving
meanwhile queue, and when it finishes the first of them leads a commit of all of them, in one
LanceDB commit. Nothing waits for a timer: a caller alone commits at once, as before; under
load each commit carries what queued during the one before it.

Each caller gets its own result, or the exception of the commit that carried its item (the
whole group shares one commit's outcome: it landed for all of them or for none).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class _Slot(Generic[T, R]):
    item: T
    done: bool = False
    value: R | None = None
    error: BaseException | None = None


class GroupCommit(Generic[T, R]):
    """Funnels concurrent `submit` calls into `commit(items) -> results` (one per item, in
    order), one commit at a time."""

    def __init__(self, commit: Callable[[Sequence[T]], Sequence[R]]) -> None:
        self._commit = commit
        self._cond = threading.Condition()
        self._queue: list[_Slot[T, R]] = []
        self._leading = False

    def submit(self, item: T) -> R:
        slot: _Slot[T, R] = _Slot(item)
        batch: list[_Slot[T, R]] = []
        with self._cond:
            self._queue.append(slot)
            while self._leading and not slot.done:
                self._cond.wait()
            if not slot.done:  # no commit in flight: lead one with everything queued
                self._leading = True
                batch, self._queue = self._queue, []
        if batch:
            self._lead(batch)
        if slot.error is not None:
            raise slot.error
        return cast(R, slot.value)  # set by the commit that carried it

    def _lead(self, batch: list[_Slot[T, R]]) -> None:
        try:
            results = self._commit([s.item for s in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"a group commit returned {len(results)} of {len(batch)}")
            for s, value in zip(batch, results, strict=True):
                s.value = value
        except BaseException as exc:  # every caller of this commit learns its outcome
            for s in batch:
                s.error = exc
        finally:
            with self._cond:
                for s in batch:
                    s.done = True
                self._leading = False
                self._cond.notify_all()


__all__ = ["GroupCommit"]
