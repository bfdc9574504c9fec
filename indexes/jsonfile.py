"""Small JSON files a store keeps beside its tables (journals, meta, index state): written
whole and atomically, read back as one JSON object."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hymem.core.errors import StoreCorruptedError


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write-then-rename with fsync, so a crash leaves the old file or the new one, never half."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=1, default=str)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`, None when there is no file. Anything else (unreadable, not
    UTF-8, not JSON, not an object) is a StoreCorruptedError naming the file, which callers
    that can repair it catch."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError included
        raise StoreCorruptedError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise StoreCorruptedError(f"{path} does not hold a JSON object")
    return data


__all__ = ["read_json", "write_json_atomic"]
