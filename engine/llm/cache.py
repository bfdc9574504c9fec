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
from pathlib import Path
from typing import Any

from hymem.llm.backend import Completion, Message
from hymem.logging import get_logger

log = get_logger("hymem.llm.cache")


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
        data = json.dumps({"text": completion.text, "model": completion.model}, ensure_ascii=False)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("llm.cache.write_failed", path=str(path), error=str(exc))
            Path(tmp).unlink(missing_ok=True)
