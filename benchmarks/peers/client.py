"""The driver's end of a worker: a subprocess in the system's own virtual environment, spoken
to in JSON lines (`workers/wire.py`). Its stderr goes to a log file, so libraries' warnings
never mix with the progress bars; a failed op raises `WorkerError` with the worker's message and
the log's path."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

WORKERS = Path(__file__).resolve().parent / "workers"
# Every worker, whatever its library: no hub downloads, no telemetry, quiet LanceDB.
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "MEM0_TELEMETRY": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "LANCEDB_LOG": "error",
    "TOKENIZERS_PARALLELISM": "false",
}


class WorkerError(RuntimeError):
    pass


class Worker:
    """One running worker. `call(op, **fields)` returns the reply's fields."""

    def __init__(self, python: Path, script: str, log: Path) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log = log
        self.started = time.perf_counter()
        self._err = log.open("a", encoding="utf-8")
        self.proc = subprocess.Popen(
            [str(python), str(WORKERS / script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            bufsize=1,
            cwd=WORKERS,
            env={**os.environ, **OFFLINE_ENV},
        )

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(
                f"worker exited during {op!r} (rc {self.proc.poll()}); see {self.log}"
            )
        reply = json.loads(line)
        if not reply.pop("ok"):
            raise WorkerError(f"{op}: {reply['error']} (see {self.log})")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("close")
            finally:
                if self.proc.stdin:
                    self.proc.stdin.close()
                self.proc.wait(timeout=120)
        self._err.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
