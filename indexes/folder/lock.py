"""The single-writer lock and the folder's metadata (`meta.json`)."""

from __future__ import annotations

import secrets
import weakref
from pathlib import Path
from typing import Any, ClassVar

import filelock
from hymem.core.errors import (
    EmbedderMismatchError,
    SchemaVersionError,
    StoreLockedError,
)
from hymem.core.time import utcnow

LOCK_FILE = "writer.lock"
META_FILE = "meta.json"
# The meta key of the store's own secret that signs `get_all`'s page cursors
# (`hymem.manage.cursor`): every process opening the store, and one after a restart, shares it.
CURSOR_KEY = "cursor_key"


class WriterLock:
    """An OS-level file lock held for the writer's lifetime; released on close or process death,
    so a killed writer never leaves the folder locked.

    Not thread-local (filelock's default is): the lock belongs to the open store, which may be
    closed on another thread than the one that opened it (a server's worker pool,
    `AsyncMemory`); a thread-local lock would look unlocked there and never be released."""

    # The writers this process holds, by folder: a second writer here is told it is this
    # process. Weak, so a writer dropped without close() (its file lock then released) is gone.
    _held: ClassVar[weakref.WeakValueDictionary[str, WriterLock]] = weakref.WeakValueDictionary()

    def __init__(self, folder: Path) -> None:
        self._key = str(folder.absolute())
        self._lock = filelock.FileLock(str(folder / LOCK_FILE), timeout=0, thread_local=False)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            if self._key in WriterLock._held:
                raise StoreLockedError(
                    f"{folder} is already open for writing in this process; use that Memory,"
                    " close it first, or open this one with read_only=True"
                ) from None
            raise StoreLockedError(
                f"{folder} is being written by another process; open it with read_only=True "
                "to read, or close the other writer"
            ) from None
        WriterLock._held[self._key] = self

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release()
            if WriterLock._held.get(self._key) is self:
                del WriterLock._held[self._key]


def new_meta(schema_version: int, embedder_name: str, dim: int) -> dict[str, Any]:
    return {
        "schema_version": schema_version,
        "embedder": embedder_name,
        "dim": dim,
        "created_at": utcnow().isoformat(timespec="seconds"),  # naive UTC, like every stamp
        CURSOR_KEY: new_cursor_key(),
    }


def new_cursor_key() -> str:
    """A new store's page-cursor secret (256 random bits)."""
    return secrets.token_urlsafe(32)


def meta_from_rows(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The meta dict mirrored in the `meta` table (key/value strings), None when empty."""
    meta: dict[str, Any] = {r["key"]: r["value"] for r in rows}
    for key in ("schema_version", "dim"):
        if str(meta.get(key, "")).isdigit():
            meta[key] = int(meta[key])
    return meta or None


def check_meta(
    meta: dict[str, Any],
    folder: Path | str,
    *,
    schema_version: int,
    embedder_name: str,
    dim: int,
) -> None:
    """Refuse folders from another schema version or another embedder (mixing vector spaces
    would silently return garbage)."""
    found = meta.get("schema_version")
    if found != schema_version:
        raise SchemaVersionError(
            f"{folder} has schema version {found!r}; this hymem reads version {schema_version}"
        )
    if meta.get("embedder") != embedder_name or meta.get("dim") != dim:
        raise EmbedderMismatchError(
            f"{folder} was built with embedder {meta.get('embedder')!r} (dim {meta.get('dim')}), "
            f"but it was opened with {embedder_name!r} (dim {dim}); open it with the same "
            "embedder or build a new memory folder"
        )


__all__ = [
    "CURSOR_KEY",
    "LOCK_FILE",
    "META_FILE",
    "WriterLock",
    "check_meta",
    "meta_from_rows",
    "new_cursor_key",
    "new_meta",
]
