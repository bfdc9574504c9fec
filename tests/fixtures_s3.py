"""A real S3-compatible server for tests: moto's, threaded, on 127.0.0.1 and a free port.

`moto_server` runs once per session; `s3_store` gives each test a fresh bucket and the
`storage_options` LanceDB and `RemoteObjects` both take, with retries short enough that a
failure surfaces in seconds. `start_moto()` is the same server for benchmarks and subprocesses.
Dummy AWS credentials are set only while the fixture lives, so nothing can reach real AWS with a
developer's own keys, and the environment is restored afterwards.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace

import boto3
import pytest
from moto.server import ThreadedMotoServer

REGION = "us-east-1"
DUMMY_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}
# Variables that would point obstore or boto3 somewhere real.
CLEARED_ENV = ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL")
TEST_RETRIES = {"client_max_retries": "2", "client_retry_timeout": "2", "timeout": "5s"}


@dataclass(frozen=True)
class S3Target:
    """One test's bucket: `uri` and `storage_options` as a user passes them to Memory."""

    uri: str
    storage_options: dict[str, str]
    endpoint: str
    bucket: str

    def with_endpoint(self, endpoint: str) -> S3Target:
        """The same bucket reached through another endpoint (a FlakyProxy in front of moto)."""
        options = {**self.storage_options, "aws_endpoint": endpoint}
        return replace(self, storage_options=options, endpoint=endpoint)


def start_moto() -> tuple[ThreadedMotoServer, str]:
    """A started, quiet moto server on 127.0.0.1 and a free port; the caller stops it."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


def storage_options_for(endpoint: str) -> dict[str, str]:
    """What LanceDB and RemoteObjects need to reach moto, with test-short retries."""
    return {
        "aws_endpoint": endpoint,
        "aws_region": REGION,
        "aws_access_key_id": DUMMY_ENV["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": DUMMY_ENV["AWS_SECRET_ACCESS_KEY"],
        "allow_http": "true",
        **TEST_RETRIES,
    }


def new_bucket(endpoint: str, prefix: str = "mem") -> S3Target:
    """A fresh, empty bucket on `endpoint`."""
    bucket = f"hymem-{uuid.uuid4().hex[:16]}"
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=DUMMY_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=DUMMY_ENV["AWS_SECRET_ACCESS_KEY"],
    )
    s3.create_bucket(Bucket=bucket)
    return S3Target(f"s3://{bucket}/{prefix}", storage_options_for(endpoint), endpoint, bucket)


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """The session's moto endpoint ("http://127.0.0.1:<port>")."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in DUMMY_ENV.items():
            mp.setenv(name, value)
        for name in CLEARED_ENV:
            mp.delenv(name, raising=False)
        server, endpoint = start_moto()
        try:
            yield endpoint
        finally:
            server.stop()


@pytest.fixture
def s3_store(moto_server: str) -> S3Target:
    """A fresh bucket for this test; its uri is `s3://<bucket>/mem`."""
    return new_bucket(moto_server)
