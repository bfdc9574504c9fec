"""Several moto S3 servers, each in its own process, for `object_store.py --servers N`.

One moto process is one interpreter lock: on this machine it saturates at ~12 adds/s of a
sharded store (RESULTS.md, issue 31), below what 4 or 8 workers ask. With N processes behind
the latency proxy's router (`http_router`: a shard's requests always reach the same server),
the test server's ceiling moves N times further out, and each process's CPU is read from
/proc so the report shows how busy the busiest one was.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import uuid
from dataclasses import dataclass
from typing import Any

import boto3

from tests.fixtures_s3 import DUMMY_ENV, REGION, start_moto

TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """A process's CPU time so far (user + system, from /proc: Linux only)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _serve(out: Any) -> None:
    """A child process: one moto server, its endpoint reported, then serve until killed."""
    _server, endpoint = start_moto()
    out.put(endpoint)
    threading.Event().wait()


@dataclass
class MotoServers:
    endpoints: list[str]
    processes: list[Any]

    def cpu_seconds(self) -> list[float]:
        """Each server process's CPU time so far (user + system)."""
        return [process_cpu_s(proc.pid) for proc in self.processes]

    def new_bucket(self) -> str:
        """A fresh bucket of one name on every server (each holds its shards' objects)."""
        bucket = f"hymem-{uuid.uuid4().hex[:16]}"
        for endpoint in self.endpoints:
            boto3.client(
                "s3",
                endpoint_url=endpoint,
                region_name=REGION,
                aws_access_key_id=DUMMY_ENV["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=DUMMY_ENV["AWS_SECRET_ACCESS_KEY"],
            ).create_bucket(Bucket=bucket)
        return bucket

    def stop(self) -> None:
        for proc in self.processes:
            proc.terminate()
        for proc in self.processes:
            proc.join(10)


def start_servers(count: int) -> MotoServers:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_serve, args=(out,), daemon=True) for _ in range(count)]
    for proc in procs:
        proc.start()
    endpoints = [out.get(timeout=120) for _ in procs]
    # the queue gives endpoints in start-up order, not process order: CPU is read per process,
    # endpoints are only routed to, so the two lists need not line up
    return MotoServers(endpoints, procs)


__all__ = ["MotoServers", "process_cpu_s", "start_servers"]
