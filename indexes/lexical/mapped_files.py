"""Sizes of the files Tantivy memory-maps, to notice one truncated under an open index.

Tantivy reads its segment files through memory maps. A mapped file that shrinks (truncated on
disk by damage, a full disk's half-written copy, a careless tool) does not fail a read: the
read faults with SIGBUS and the process dies, which no Python code can catch. Segment files are
immutable once written, so a mapped one that got smaller is damage; checking sizes with `stat`
before each use turns that into a noted problem instead of a dead process. (A truncation racing
a search between the check and the read cannot be caught this way; it is the price of mmap.)
"""

from __future__ import annotations

import os
from pathlib import Path


def _is_segment_file(name: str) -> bool:
    # meta.json and .managed.json are rewritten by replacement (and may shrink legitimately);
    # lock files are empty. Everything else Tantivy writes is an immutable segment file.
    return not name.startswith(".") and not name.endswith(".json")


def segment_file_sizes(folder: Path) -> dict[str, int]:
    """Name -> size of every segment file in `folder` (empty if it cannot be listed)."""
    sizes: dict[str, int] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if _is_segment_file(entry.name) and entry.is_file(follow_symlinks=False):
                    sizes[entry.name] = entry.stat(follow_symlinks=False).st_size
    except OSError:
        return {}
    return sizes


def shrunk_file(folder: Path, sizes: dict[str, int]) -> str | None:
    """A file of `sizes` that is now smaller than recorded, or None. A deleted file is not
    damage to a mapping (the mapping keeps the old inode), so it is not reported here."""
    for name, size in sizes.items():
        try:
            now = os.stat(folder / name, follow_symlinks=False).st_size
        except OSError:
            continue
        if now < size:
            return f"{name} shrank from {size:,} to {now:,} bytes while mapped"
    return None


__all__ = ["segment_file_sizes", "shrunk_file"]
