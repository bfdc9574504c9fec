"""Which shard holds a user, and what a shard manifest may say."""

from __future__ import annotations

from collections import Counter

import pytest
from hymem.core.errors import ConfigError, StoreError
from hymem.indexes.shards.placement import (
    check_count,
    decode_manifest,
    encode_manifest,
    shard_of,
    shard_uri,
)


def test_a_users_shard_is_fixed_across_processes_and_versions() -> None:
    # Literals, not a recomputation: a change of hash would move every user of every store.
    assert [shard_of(u, 8) for u in ("ann", "bob", "user-42", "ü")] == EXPECTED_OF_8


EXPECTED_OF_8 = [5, 2, 6, 7]


def test_users_spread_evenly_over_the_shards() -> None:
    load = Counter(shard_of(f"user-{i}", 16) for i in range(16_000))
    assert set(load) == set(range(16))
    assert max(load.values()) < 1.15 * 1000 and min(load.values()) > 0.85 * 1000


def test_one_shard_holds_everyone() -> None:
    assert {shard_of(f"u{i}", 1) for i in range(100)} == {0}


def test_shard_uris_sit_under_the_root() -> None:
    assert shard_uri("s3://b/mem/", 3) == "s3://b/mem/shards/03"


@pytest.mark.parametrize("bad", [0, -1, 257, 2.0, True, "4"])
def test_a_bad_shard_count_is_a_config_error(bad: object) -> None:
    with pytest.raises(ConfigError, match="shards"):
        check_count(bad)  # type: ignore[arg-type]  # the point: callers pass anything


def test_a_manifest_round_trips() -> None:
    assert decode_manifest(encode_manifest(12), "s3://b/m") == 12


@pytest.mark.parametrize(
    "data",
    [
        b"{not json",
        b"[]",
        b'{"format": 2, "shards": 4}',
        b'{"format": 1, "shards": 0}',
        b'{"format": 1}',
        b'{"format": 1, "shards": "4"}',
    ],
)
def test_a_damaged_or_newer_manifest_is_a_store_error(data: bytes) -> None:
    with pytest.raises(StoreError, match="shard manifest"):
        decode_manifest(data, "s3://b/m")
