"""Storage faults as hymem errors: a full disk raises `StorageFullError` wherever it strikes,
and damaged LanceDB data (a missing or truncated fragment) a `StoreCorruptedError` that says what
to run, instead of LanceDB's raw `RuntimeError("lance error: ...")` on every call.

LanceDB and Tantivy report ENOSPC from Rust as a RuntimeError, ValueError or OSError whose
message carries "No space left on device (os error 28)"; Python's own writes (the journal, the
sync record) raise OSError with errno ENOSPC. Every write the `Store` makes goes through
`storage_faults`, so callers see one typed error with what to do, never a raw one.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from hymem.core.errors import (
    HymemError,
    StorageFullError,
    StoreCorruptedError,
    StoreUnavailableError,
)

T = TypeVar("T")
# What an unavailable store's error promises: every write is keyed by id (turns, segments,
# summaries) or journaled and settled by the next write of the user, so a retry never doubles.
RETRY_HINT = "retry the call later; a retry stores nothing twice"
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_FULL_TEXT = ("no space left on device", "os error 28", "disk quota exceeded", "os error 122")


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` (or an exception it was raised from) reports a full disk or quota."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in _FULL_ERRNOS:
            return True
        if any(text in str(cur).lower() for text in _FULL_TEXT):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def is_damage(exc: BaseException) -> bool:
    """Whether `exc` is LanceDB failing to read its own files (not a full disk)."""
    text = str(exc)
    return isinstance(exc, RuntimeError | OSError) and (
        "lance error" in text.lower() or "LanceError" in text
    )


# What LanceDB says when it gave up on a remote store (after its own retries) or on a commit
# that other writers kept pre-empting: transient (unreachable, overloaded, contended), not damage.
_UNAVAILABLE_MARKS = (
    "Too many concurrent writers",
    "Retryable commit conflict",
    "Service Unavailable",
    "SlowDown",
    "after 1 retries",
    "retries, max_retries",
    "error sending request",
    "Connection refused",
    "operation timed out",
    "dns error",
)


def is_unavailable(exc: BaseException) -> bool:
    """Whether `exc` is an object store failing transiently (5xx, timeouts, refused)."""
    text = str(exc)
    return isinstance(exc, RuntimeError | OSError) and any(m in text for m in _UNAVAILABLE_MARKS)


def damage_message(folder: Path | str, action: str, exc: BaseException) -> str:
    first = str(exc).split(", /rustc/")[0][:400]  # Rust appends source locations
    return (
        f"{action} failed: the memory at {folder} is damaged ({first}). Run `hymem doctor "
        f"--store {folder}` to see what, and `hymem repair --store {folder}` to restore the "
        "newest readable version of each damaged table"
    )


@contextmanager
def storage_faults(folder: Path | str, action: str) -> Iterator[None]:
    """Re-raise a full-disk failure of `action` as StorageFullError and LanceDB damage as
    StoreCorruptedError; anything else unchanged."""
    try:
        yield
    except HymemError:
        raise
    except Exception as exc:
        if is_disk_full(exc):
            raise StorageFullError(
                f"{action} failed: the disk holding {folder} is full ({exc}). Free space and "
                "retry: nothing was stored that the call did not report"
            ) from exc
        if is_unavailable(exc):
            first = str(exc).split(", /rustc/")[0][:400]
            raise StoreUnavailableError(
                f"{action} failed: the store at {folder} is unavailable or contended ({first}); "
                f"this is transient: {RETRY_HINT}"
            ) from exc
        if is_damage(exc):
            raise StoreCorruptedError(damage_message(folder, action, exc)) from exc
        raise


def guarded(items: Iterator[T], folder: Path | str, action: str) -> Iterator[T]:
    """`items`, with `storage_faults` applied while a lazy scan is consumed."""
    with storage_faults(folder, action):
        yield from items


__all__ = ["damage_message", "guarded", "is_damage", "is_disk_full", "storage_faults"]
