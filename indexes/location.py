"""Where a store lives: a local folder (today's layout), or an object-store URI.

`Memory("s3://bucket/prefix")` (also `gs://`, `az://`/`abfs://`, and `file://` for a local
object-store root) keeps everything durable under the URI:

    <uri>/lance/                 the LanceDB tables, the `meta` table and the sleep journal
    <uri>/_hymem/leases/         one lease object per user being written (`leases.py`)
    <uri>/_hymem/journal/        one commit journal object per user with a write in flight
    <uri>/_hymem/erasures.json   bumped by every erasure, so replicas drop the erased bytes
    <uri>/_hymem/identity.json   the first opener's claim on a new store's identity

and each worker keeps only derived state in a local cache folder (`cache`): its Tantivy replica
and the record of what the replica matches. Losing the cache costs a rebuild, nothing else.

Connection settings come from `storage_options` (LanceDB's and the `object_store` crate's key
names: `aws_endpoint`, `aws_region`, `allow_http`, ...), then from the usual environment
variables (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, ...), which both LanceDB and
obstore also read themselves; the explicit ones win. LanceDB's aliases (`endpoint`, `region`,
`access_key_id`, ...) are read as their canonical `aws_*` names, so an alias and the same
setting from the environment are one option; one option given twice with two values is a
`ConfigError` naming both keys.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hymem.core.errors import ConfigError, UserInputError

REMOTE_SCHEMES = ("s3", "gs", "gcs", "az", "abfs", "abfss", "azure", "memory")
# Environment variables read for S3-compatible stores, mapped to object_store's option names.
_S3_ENV = {
    "AWS_ENDPOINT_URL_S3": "aws_endpoint",
    "AWS_ENDPOINT_URL": "aws_endpoint",
    "AWS_ENDPOINT": "aws_endpoint",
    "AWS_REGION": "aws_region",
    "AWS_DEFAULT_REGION": "aws_region",
    "AWS_ACCESS_KEY_ID": "aws_access_key_id",
    "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token",
    "AWS_ALLOW_HTTP": "allow_http",
}

# The other names LanceDB and the `object_store` crate accept for an S3 option (LanceDB's docs
# use `endpoint`, `region`, ...): each is read as its canonical `aws_*` name, so one setting
# given twice (an alias here, the canonical name from the environment) is one key, not obstore's
# "Duplicate key" error.
_S3_ALIASES = {
    "access_key_id": "aws_access_key_id",
    "secret_access_key": "aws_secret_access_key",
    "default_region": "aws_default_region",
    "region": "aws_region",
    "bucket": "aws_bucket",
    "bucket_name": "aws_bucket",
    "aws_bucket_name": "aws_bucket",
    "endpoint": "aws_endpoint",
    "endpoint_url": "aws_endpoint",
    "aws_endpoint_url": "aws_endpoint",
    "session_token": "aws_session_token",
    "token": "aws_session_token",
    "aws_token": "aws_session_token",
    "virtual_hosted_style_request": "aws_virtual_hosted_style_request",
    "s3_express": "aws_s3_express",
    "imdsv1_fallback": "aws_imdsv1_fallback",
    "metadata_endpoint": "aws_metadata_endpoint",
    "unsigned_payload": "aws_unsigned_payload",
    "checksum_algorithm": "aws_checksum_algorithm",
    "skip_signature": "aws_skip_signature",
    "conditional_put": "aws_conditional_put",
    "disable_tagging": "aws_disable_tagging",
    "request_payer": "aws_request_payer",
}


def canonical_option(scheme: str, key: str) -> str:
    """The name an option is kept under: lower case, and for S3 its `aws_*` name."""
    name = key.lower()
    return _S3_ALIASES.get(name, name) if scheme == "s3" else name


def default_cache_root() -> Path:
    """`$HYMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/hymem`, else `~/.cache/hymem`."""
    explicit = os.environ.get("HYMEM_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "hymem"


def options_from_env(scheme: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The S3 settings found in the environment (other schemes: their SDK reads its own)."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    if scheme != "s3":
        return found
    for var, key in _S3_ENV.items():
        value = env.get(var)
        if value and key not in found:
            found[key] = value
    return found


@dataclass(frozen=True)
class StoreLocation:
    """A store's durable home (`uri`) and this worker's folder for derived state (`cache`)."""

    uri: str
    remote: bool
    cache: Path
    storage_options: dict[str, str] = field(default_factory=dict)

    @property
    def lance_uri(self) -> str:
        return f"{self.uri.rstrip('/')}/lance"

    @property
    def folder(self) -> Path:
        """The local folder of a local store (its derived state lives beside its tables)."""
        if self.remote:
            raise ValueError(f"{self.uri} is not a local folder")
        return Path(self.uri)

    def __str__(self) -> str:
        return self.uri


def is_remote_uri(text: str) -> bool:
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in REMOTE_SCHEMES


def parse_location(
    where: str | os.PathLike[str],
    *,
    storage_options: Mapping[str, object] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> StoreLocation:
    """A local path (or `file://` path) keeps today's folder layout; an object-store URI
    gets a per-URI cache folder under `cache_dir` (default `default_cache_root()`)."""
    text = os.fspath(where)
    if text.startswith("file://"):
        text = text[len("file://") :]
        if not text:
            raise UserInputError("a file:// store URI needs a path")
    if not is_remote_uri(text):
        if "://" in text:
            scheme = text.partition("://")[0]
            raise UserInputError(
                f"unsupported store URI scheme {scheme!r}: use a local path or one of "
                f"{', '.join(s + '://' for s in ('s3', 'gs', 'az', 'file'))}"
            )
        if storage_options:
            raise UserInputError("storage_options apply only to object-store URIs (s3://, ...)")
        return StoreLocation(uri=text, remote=False, cache=Path(text))
    scheme, _, rest = text.partition("://")
    bucket = rest.split("/", 1)[0]
    if not bucket:
        raise UserInputError(f"store URI {text!r} names no bucket")
    opts = options_from_env(scheme.lower())
    given: dict[str, str] = {}  # canonical name -> the key the caller used for it
    for key, value in (storage_options or {}).items():
        if not isinstance(key, str) or not isinstance(value, str | int | float | bool):
            raise UserInputError(f"storage option {key!r} must map a name to a scalar value")
        text_value = str(value).lower() if isinstance(value, bool) else str(value)
        name = canonical_option(scheme.lower(), key)
        if name in given and opts[name] != text_value:
            raise ConfigError(
                f"storage options {given[name]!r} and {key!r} both set {name!r}, to "
                f"{opts[name]!r} and {text_value!r}: give it once"
            )
        given[name] = key
        opts[name] = text_value  # explicit options win over the environment's
    uri = text.rstrip("/")
    digest = hashlib.sha256(uri.encode()).hexdigest()[:16]
    root = Path(cache_dir) if cache_dir is not None else default_cache_root()
    return StoreLocation(uri=uri, remote=True, cache=root / "stores" / digest, storage_options=opts)


__all__ = [
    "REMOTE_SCHEMES",
    "StoreLocation",
    "canonical_option",
    "default_cache_root",
    "is_remote_uri",
    "options_from_env",
    "parse_location",
]
