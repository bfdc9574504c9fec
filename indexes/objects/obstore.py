"""`Objects` on a real object store through obstore: s3://, gs://, az:// from one code path.

`storage_options` is the very dict LanceDB gets, so a user configures a store once. obstore
wants it split three ways (passing a client key such as `allow_http` as store config makes its
S3 builder panic): HTTP client keys go to `client_options`, `client_max_retries` and
`client_retry_timeout` (LanceDB's names, seconds) to `retry_config`, the rest (`aws_endpoint`,
`aws_region`, keys, `google_*`, `azure_*`) to `config`. On S3, etag conditional puts are always
switched on: without them `replace` could not be conditional.

obstore retries 5xx answers, connection errors and timeouts of reads itself, with exponential
backoff and jitter, within `max_retries` and `retry_timeout`. hymem's defaults are much shorter
than obstore's (10 retries, 3 minutes), because a stateless worker should rather fail a request
with `StoreUnavailableError` than hang: 3 retries within 15 s, 10 s per request.

file:// is refused: obstore's LocalStore has no conditional replace (`PutMode::Update` is "not
yet implemented"), and local folders keep their file lock anyway.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, NoReturn

import obstore
from hymem.core.errors import ConfigError, StoreError, StoreUnavailableError
from hymem.indexes.objects.objects import Stored, check_key
from obstore import exceptions as obx
from obstore.store import from_url

DEFAULT_MAX_RETRIES = 3
DEFAULT_RETRY_TIMEOUT_S = 15.0
DEFAULT_CLIENT = {"connect_timeout": "5s", "timeout": "10s"}
RETRY_KEYS = frozenset({"client_max_retries", "client_retry_timeout"})
# obstore's ClientConfig keys: they configure the HTTP client, not the store.
CLIENT_KEYS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "connect_timeout",
        "default_content_type",
        "http1_only",
        "http2_keep_alive_interval",
        "http2_keep_alive_timeout",
        "http2_keep_alive_while_idle",
        "http2_only",
        "pool_idle_timeout",
        "pool_max_idle_per_host",
        "proxy_ca_certificate",
        "proxy_excludes",
        "proxy_url",
        "randomize_addresses",
        "read_timeout",
        "timeout",
        "user_agent",
    }
)
# LanceDB-only options that obstore would reject as unknown.
LANCE_ONLY_KEYS = frozenset({"download_retry_count"})
SCHEMES = ("s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "adl")


def split_options(
    uri: str, storage_options: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str], dict[str, Any]]:
    """(config, client_options, retry_config) for `obstore.store.from_url`."""
    config: dict[str, str] = {}
    client = dict(DEFAULT_CLIENT)
    for key, value in storage_options.items():
        name = key.lower()
        if name in CLIENT_KEYS:
            client[name] = str(value)
        elif name not in RETRY_KEYS and name not in LANCE_ONLY_KEYS:
            config[name] = str(value)
    if uri.split("://", 1)[0].lower() in ("s3", "s3a"):
        config["aws_conditional_put"] = "etag"
    retries = int(storage_options.get("client_max_retries", DEFAULT_MAX_RETRIES))
    budget = float(storage_options.get("client_retry_timeout", DEFAULT_RETRY_TIMEOUT_S))
    retry = {
        "max_retries": retries,
        "retry_timeout": timedelta(seconds=budget),
        "backoff": {
            "init_backoff": timedelta(milliseconds=100),
            "max_backoff": timedelta(seconds=max(0.1, min(5.0, budget / 4))),
            "base": 2,
        },
    }
    return config, client, retry


# What the object store client says when it found no credentials in the options or the
# environment and fell back to a cloud metadata service, which is not there (or refused it).
_NO_CREDENTIALS_MARKS = ("169.254.169.254", "metadata.google.internal", "credential")


def _fail(op: str, key: str, exc: Exception) -> NoReturn:
    """Translate an obstore failure at the boundary: credentials and configuration are not
    transient; everything else (retries exhausted, connection, timeout) is."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if any(mark in str(exc).lower() for mark in _NO_CREDENTIALS_MARKS):
        raise ConfigError(
            f"no credentials for the object store: {op} {key!r} found none in storage_options"
            " (HYMEM_STORAGE_OPTIONS) or the environment (e.g. AWS_ACCESS_KEY_ID and"
            f" AWS_SECRET_ACCESS_KEY), nor a cloud metadata service; set them: {first}"
        ) from exc
    if isinstance(exc, obx.PermissionDeniedError | obx.UnauthenticatedError):
        raise StoreError(f"the object store refused {op} {key!r}: {first}") from exc
    if isinstance(exc, obx.NotSupportedError | NotImplementedError):
        raise StoreError(f"the object store cannot {op} {key!r}: {first}") from exc
    raise StoreUnavailableError(
        f"{op} {key!r} failed after the configured retries (client_max_retries, "
        f"client_retry_timeout); transient, retry later: {first}"
    ) from exc


@contextmanager
def _translated(op: str, key: str) -> Iterator[None]:
    try:
        yield
    except (FileNotFoundError, obx.AlreadyExistsError, obx.PreconditionError):
        raise  # answers, not failures: the caller turns them into None
    except (obx.BaseError, OSError, NotImplementedError) as exc:
        _fail(op, key, exc)


class RemoteObjects:
    """`Objects` under `uri` ("s3://bucket/prefix"); keys are relative to the prefix."""

    def __init__(self, uri: str, storage_options: Mapping[str, str]) -> None:
        scheme = uri.split("://", 1)[0].lower()
        if scheme not in SCHEMES:
            raise ConfigError(
                f"{uri!r}: objects need a store with conditional writes (s3://, gs://, az://)"
            )
        self.uri = uri
        config, client, retry = split_options(uri, storage_options)
        try:
            # obstore types from_url per scheme; the scheme is one of SCHEMES, checked above.
            self._store = from_url(  # type: ignore[call-overload]  # scheme known only at run time
                uri, config=config, client_options=client, retry_config=retry
            )
        except obx.UnknownConfigurationKeyError as exc:
            raise ConfigError(f"storage_options for {uri!r}: {exc}") from exc

    def get(self, key: str) -> Stored | None:
        try:
            with _translated("get", key):
                res = obstore.get(self._store, check_key(key))
                data = bytes(res.bytes())
        except FileNotFoundError:
            return None
        etag = res.meta["e_tag"]
        if etag is None:
            raise StoreError(f"the object store gave no etag for {key!r}")
        return Stored(data, etag)

    def create(self, key: str, data: bytes) -> str | None:
        try:
            with _translated("create", key):
                return self._etag(obstore.put(self._store, check_key(key), data, mode="create"))
        except (obx.AlreadyExistsError, obx.PreconditionError):
            return None

    def replace(self, key: str, data: bytes, etag: str) -> str | None:
        try:
            with _translated("replace", key):
                res = obstore.put(self._store, check_key(key), data, mode={"e_tag": etag})
                return self._etag(res)
        except (obx.PreconditionError, obx.AlreadyExistsError, FileNotFoundError):
            return None

    def put(self, key: str, data: bytes) -> str:
        with _translated("put", key):
            return self._etag(obstore.put(self._store, check_key(key), data))

    def delete(self, key: str) -> None:
        try:
            with _translated("delete", key):
                obstore.delete(self._store, check_key(key))
        except FileNotFoundError:
            return

    def list(self, prefix: str) -> list[str]:
        # obstore lists whole path segments ("a" means "a/"); list the parent, filter by string.
        parent = prefix.rpartition("/")[0]
        with _translated("list", prefix):
            metas = obstore.list(self._store, prefix=parent or None).collect()
        return sorted(m["path"] for m in metas if m["path"].startswith(prefix))

    def _etag(self, result: Mapping[str, Any]) -> str:
        etag = result.get("e_tag")
        if etag is None:
            raise StoreError(f"the object store at {self.uri} returned no etag on write")
        return str(etag)
