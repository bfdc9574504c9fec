"""Where a store lives: local paths keep the folder layout, object-store URIs get a cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from hymem import MemoryConfig
from hymem.api.memory_args import store_location
from hymem.core.errors import ConfigError, UserInputError
from hymem.indexes.location import options_from_env, parse_location


def test_a_local_path_and_a_file_uri_are_the_same_folder(tmp_path: Path) -> None:
    plain = parse_location(str(tmp_path / "m"))
    uri = parse_location(f"file://{tmp_path / 'm'}")
    assert not plain.remote and plain == uri and plain.folder == tmp_path / "m"


def test_an_s3_uri_keeps_its_double_slash_and_gets_a_cache_per_uri(tmp_path: Path) -> None:
    a = parse_location("s3://bucket/a/", cache_dir=tmp_path)
    b = parse_location("s3://bucket/b", cache_dir=tmp_path)
    assert a.remote and a.uri == "s3://bucket/a" and a.lance_uri == "s3://bucket/a/lance"
    assert a.cache.parent == b.cache.parent == tmp_path / "stores" and a.cache != b.cache


def test_explicit_options_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://env:9000")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    loc = parse_location(
        "s3://b/p", storage_options={"aws_endpoint": "http://mine", "allow_http": True}
    )
    assert loc.storage_options["aws_endpoint"] == "http://mine"
    assert loc.storage_options["aws_region"] == "eu-west-1"
    assert loc.storage_options["allow_http"] == "true"
    assert options_from_env("gs", {"AWS_REGION": "x"}) == {}


@pytest.mark.parametrize(
    ("where", "why"),
    [("ftp://host/x", "unsupported store URI scheme"), ("s3:///prefix", "names no bucket")],
)
def test_unusable_uris_are_named(where: str, why: str) -> None:
    with pytest.raises(UserInputError, match=why):
        parse_location(where)


def test_options_with_a_local_path_are_a_mistake_but_configured_ones_are_ignored(
    tmp_path: Path,
) -> None:
    with pytest.raises(UserInputError, match="object-store URIs"):
        parse_location(str(tmp_path), storage_options={"aws_region": "x"})
    config = MemoryConfig.defaults(storage_options={"aws_region": "x"})
    assert not store_location(str(tmp_path), None, config).remote
    assert store_location("s3://b/p", None, config).storage_options["aws_region"] == "x"


def test_a_bad_option_value_is_refused() -> None:
    with pytest.raises(UserInputError, match="scalar"):
        parse_location("s3://b/p", storage_options={"aws_region": ["x"]})  # type: ignore[dict-item]


def test_lancedb_aliases_are_read_as_their_canonical_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    loc = parse_location(
        "s3://b/p", storage_options={"endpoint": "http://mine:9000", "Region": "eu-west-1"}
    )
    assert loc.storage_options["aws_endpoint"] == "http://mine:9000"
    assert loc.storage_options["aws_region"] == "eu-west-1"  # explicit wins over the env
    assert "region" not in loc.storage_options and "endpoint" not in loc.storage_options


def test_one_option_given_twice_with_two_values_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="'region' and 'aws_region'"):
        parse_location("s3://b/p", storage_options={"region": "a", "aws_region": "b"})
    same = parse_location("s3://b/p", storage_options={"region": "a", "aws_region": "a"})
    assert same.storage_options["aws_region"] == "a"
