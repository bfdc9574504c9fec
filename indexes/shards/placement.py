"""Where a user's rows live in a sharded store: pure rules, no I/O.

A sharded store is N complete stores under one URI (`<uri>/shards/00`, `01`, ...), each with
its own LanceDB tables, journals, leases and identity, plus a manifest at the root that fixes N
when the store is created. A user belongs to one shard forever: `shard_of` hashes the user id
(BLAKE2b, the same on every machine and Python version, unlike `hash()`), so workers writing
users of different shards never commit to the same table, and each shard's tables take their
own commit rate.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hymem.core.errors import ConfigError, StoreError

MANIFEST_KEY = "_hymem/shards.json"
MANIFEST_FORMAT = 1
MAX_SHARDS = 256


def check_count(count: int) -> int:
    """A shard count a store may be created with (1 keeps the unsharded layout)."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SHARDS:
        raise ConfigError(f"shards must be an integer from 1 to {MAX_SHARDS}, got {count!r}")
    return count


def shard_of(user_id: str, count: int) -> int:
    """The shard holding `user_id`'s rows, stable across processes and machines."""
    digest = hashlib.blake2b(user_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def shard_uri(root: str, index: int) -> str:
    """The URI of shard `index` under a sharded store's root URI."""
    return f"{root.rstrip('/')}/shards/{index:02d}"


def encode_manifest(count: int) -> bytes:
    return json.dumps({"format": MANIFEST_FORMAT, "shards": check_count(count)}).encode()


def decode_manifest(data: bytes, where: str) -> int:
    """The shard count a manifest fixes; a damaged or newer manifest is a `StoreError` (opening
    it as anything else would put users in the wrong shard)."""
    try:
        found: Any = json.loads(data)
    except ValueError as exc:
        raise StoreError(f"the shard manifest of {where} is not JSON: {exc}") from exc
    if not isinstance(found, dict):
        raise StoreError(f"the shard manifest of {where} is not a JSON object")
    if found.get("format") != MANIFEST_FORMAT:
        raise StoreError(
            f"the shard manifest of {where} has format {found.get('format')!r} (this hymem"
            f" reads {MANIFEST_FORMAT}): upgrade hymem"
        )
    count = found.get("shards")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SHARDS:
        raise StoreError(f"the shard manifest of {where} names no valid shard count: {count!r}")
    return count


__all__ = [
    "MANIFEST_KEY",
    "MAX_SHARDS",
    "check_count",
    "decode_manifest",
    "encode_manifest",
    "shard_of",
    "shard_uri",
]
