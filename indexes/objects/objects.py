"""Small objects with conditional writes: the coordination layer beside LanceDB's tables.

LanceDB commits its own tables safely on an object store; what hymem adds there (per-user
leases, small markers) needs only a handful of tiny objects and one primitive, compare-and-swap:
`create` succeeds only where nothing exists, `replace` only while the object still has the etag
the caller read. Both report a lost race as None, never as an exception, because losing a race
is an expected outcome that callers branch on; transport failures raise `StoreUnavailableError`.

`MemoryObjects` is the in-memory twin, held to the same conformance suite as `RemoteObjects`
(`objects_remote.py`, obstore on s3://, gs://, az://).

Etags are opaque. On S3 they are the MD5 of the content, so writing the same bytes again yields
the same etag (A -> B -> A looks unchanged); the twin copies that. Callers for whom such an ABA
matters put a counter or a timestamp in the data, as leases do with their token and expiry.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hymem.core.errors import UserInputError


@dataclass(frozen=True)
class Stored:
    """An object's bytes and the etag to pass to `replace` to change exactly this version."""

    data: bytes
    etag: str


@runtime_checkable
class Objects(Protocol):
    """Small JSON-sized objects under one root (keys are '/'-separated, relative)."""

    def get(self, key: str) -> Stored | None:
        """The object, None when there is none."""
        ...

    def create(self, key: str, data: bytes) -> str | None:
        """Write only if the key does not exist: the new etag, None if it already exists."""
        ...

    def replace(self, key: str, data: bytes, etag: str) -> str | None:
        """Write only over the version `etag`: the new etag, None if it changed or is gone."""
        ...

    def put(self, key: str, data: bytes) -> str:
        """Write unconditionally; the new etag."""
        ...

    def delete(self, key: str) -> None:
        """Remove the object; a missing one is fine."""
        ...

    def list(self, prefix: str) -> list[str]:
        """Keys starting with `prefix` (a plain string prefix, '' for all), sorted."""
        ...


def check_key(key: str) -> str:
    """A key must be relative and plain, so every backend maps it to the same path."""
    parts = key.split("/")
    if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UserInputError(f"invalid object key {key!r}: relative, '/'-separated, no empty parts")
    return key


def content_etag(data: bytes) -> str:
    """S3's etag for a single-part upload: the quoted MD5 of the bytes."""
    return '"' + hashlib.md5(data, usedforsecurity=False).hexdigest() + '"'


class MemoryObjects:
    """Thread-safe in-memory `Objects`, with S3's content-hash etags."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, Stored] = {}

    def get(self, key: str) -> Stored | None:
        with self._lock:
            return self._items.get(check_key(key))

    def create(self, key: str, data: bytes) -> str | None:
        with self._lock:
            if check_key(key) in self._items:
                return None
            return self._store(key, data)

    def replace(self, key: str, data: bytes, etag: str) -> str | None:
        with self._lock:
            current = self._items.get(check_key(key))
            if current is None or current.etag != etag:
                return None
            return self._store(key, data)

    def put(self, key: str, data: bytes) -> str:
        with self._lock:
            return self._store(check_key(key), data)

    def delete(self, key: str) -> None:
        with self._lock:
            self._items.pop(check_key(key), None)

    def list(self, prefix: str) -> list[str]:
        with self._lock:
            return sorted(k for k in self._items if k.startswith(prefix))

    def _store(self, key: str, data: bytes) -> str:
        stored = Stored(bytes(data), content_etag(data))
        self._items[key] = stored
        return stored.etag
