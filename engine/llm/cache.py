"""Optional on-disk response cache for reproducible evaluation runs (off unless a dir is set).

Key: sha256 over the model, the rendered messages and every generation parameter, so any change
to a prompt file, its variables or the settings misses. One JSON file per key, written to a
temporary file and renamed into place (atomic on POSIX and Windows), so concurrent writers and
readers never see a partial entry; an unreadable entry is treated as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from hymem.core.logging import get_logger
from hymem.llm.backend import Completion, Message

log = get_logger("hymem.llm.cache")

# The user whose data the model call in progress reads: recorded on the cache entry it writes,
# so erasing the user can find and delete the entries (a key is a hash and names no one).
_owner: ContextVar[str | None] = ContextVar("hymem_cache_owner", default=None)


@contextmanager
def cache_owner(user_id: str | None) -> Iterator[None]:
    """Attribute the model calls made inside the block to `user_id` (for erasure)."""
    token = _owner.set(user_id)
    try:
        yield
    finally:
        _owner.reset(token)


def cache_key(model: str, messages: list[Message], params: dict[str, Any]) -> str:
    payload = json.dumps(
        {"model": model, "messages": messages, "params": params},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Completions stored under `root/<key[:2]>/<key>.json`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Completion(text=data["text"], model=data["model"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("llm.cache.unreadable", path=str(path), error=str(exc))
            return None

    def put(self, key: str, completion: Completion) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"text": completion.text, "model": completion.model, "user": _owner.get()}
        data = json.dumps(entry, ensure_ascii=False)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("llm.cache.write_failed", path=str(path), error=str(exc))
            Path(tmp).unlink(missing_ok=True)

    def forget_user(self, user_id: str) -> int:
        """Delete every entry written for `user_id`'s data (erasure); returns how many.
        Entries written before owners were recorded name no one and are left alone: delete
        the whole cache folder to be sure of those."""
        removed = 0
        for path in self.root.glob("*/*.json"):
            try:
                owner = json.loads(path.read_text(encoding="utf-8")).get("user")
            except (OSError, ValueError, AttributeError):
                continue
            if owner == user_id:
                path.unlink(missing_ok=True)
                removed += 1
        return removed
