"""Readiness: whether a served Memory can take traffic now, and if not, why.

Liveness (`/healthz`) only says the process answers. Readiness (`/readyz`) is what an
orchestrator routes traffic by, so each check names what would fail a request sent now:

* store: the store is open (a closed Memory answers every call 503).
* journal: the write journal is settled. Opening a store settles a journal left by a crash
  before the store serves anything, and `hymem serve` opens the store before it listens, so
  once the server answers this holds; it reports whether the lexical index is usable too
  (without it searches are dense-only: degraded, still ready).
* embedder: the embedding model is loaded. Models load lazily on first use, so the server
  loads it in the background at startup (`EmbedderWarmup`) and is not ready until it has:
  otherwise the first requests would each wait out the load (seconds for MiniLM).
* model: the model server answers, when the llm is `openai:`; `extractive` needs none and an
  `hf:` model is local. The request goes to the server's `/models` with a short timeout, and
  its answer is kept `ttl_s`, so frequent probes cost one request per few seconds.

Details never hold a secret: no API key, and no model server address.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from hymem.core.errors import StoreClosedError
from hymem.core.logging import get_logger
from hymem.ops.served import Served
from pydantic import BaseModel

log = get_logger("hymem.ops.readiness")

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
MODEL_PROBE_TIMEOUT_S = 2.0
MODEL_PROBE_TTL_S = 5.0


class ReadyCheck(BaseModel):
    """One readiness check: whether it passes, and what it found (the reason when not)."""

    ok: bool
    detail: str


class EmbedderWarmup:
    """Loads the embedder once in a background thread (embedding one short text loads any
    embedder, whatever its kind), so the server answers probes while a model loads."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._error: str | None = None

    def start(self) -> None:
        """Begin loading (once; later calls do nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._load, name="hymem-embedder-warmup", daemon=True
            )
            self._thread.start()

    @property
    def done(self) -> bool:
        """Whether the load has ended: loaded, or failed (calls then fail with the embedder's
        own error, and the check says why)."""
        return self._done.is_set()

    def wait(self, timeout_s: float) -> bool:
        """Whether the load ended (loaded or failed) within `timeout_s`."""
        return self._done.wait(timeout_s)

    def _load(self) -> None:
        started = time.perf_counter()
        try:
            self._embedder.embed(["hymem readiness warm-up"])
        except Exception as exc:  # reported by the check, never raised into a thread's void
            self._error = f"{type(exc).__name__}: {exc}"[:300]
            log.error("embedder.warmup_failed", error=self._error)
        else:
            log.info("embedder.warm", s=round(time.perf_counter() - started, 3))
        finally:
            self._done.set()

    def check(self) -> ReadyCheck:
        name = getattr(self._embedder, "name", type(self._embedder).__name__)
        if not self._done.is_set():
            self.start()  # an app run without its startup still gets there
            return ReadyCheck(ok=False, detail=f"embedder {name} is loading")
        if self._error is not None:
            return ReadyCheck(ok=False, detail=f"embedder {name} failed to load: {self._error}")
        return ReadyCheck(ok=True, detail=f"embedder {name} loaded")


class ModelProbe:
    """Whether the `openai:` model server answers: GET `<base_url>/models`, cached `ttl_s`."""

    def __init__(
        self,
        config: Any,
        *,
        timeout_s: float = MODEL_PROBE_TIMEOUT_S,
        ttl_s: float = MODEL_PROBE_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """`transport`: httpx's, for tests; None is the network."""
        self._spec = str(config.llm).strip()
        key = config.llm_api_key.get_secret_value() if config.llm_api_key else None
        self._base_url = config.llm_base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._api_key = key or os.environ.get("OPENAI_API_KEY") or None
        self._timeout_s, self._ttl_s, self._clock = timeout_s, ttl_s, clock
        self._transport = transport
        self._lock = threading.Lock()
        self._last: tuple[float, ReadyCheck] | None = None

    def check(self) -> ReadyCheck:
        kind = self._spec.partition(":")[0]
        if kind != "openai":
            where = "no model server" if kind == "extractive" else "a local model"
            return ReadyCheck(ok=True, detail=f"{self._spec}: {where}")
        with self._lock:  # one request at a time; the others take its answer
            if self._last is not None and self._clock() - self._last[0] < self._ttl_s:
                return self._last[1]
            found = self._ask()
            self._last = (self._clock(), found)
            return found

    def _ask(self) -> ReadyCheck:
        url = (self._base_url or OPENAI_DEFAULT_URL).rstrip("/") + "/models"
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            with httpx.Client(transport=self._transport, timeout=self._timeout_s) as http:
                status = http.get(url, headers=headers).status_code
        except httpx.HTTPError as exc:
            reason = f"the model server did not answer ({type(exc).__name__})"
            return ReadyCheck(ok=False, detail=reason)
        if status in (401, 403):
            return ReadyCheck(ok=False, detail=f"the model server refused the key (HTTP {status})")
        if status >= 500 and status != 501:  # 501: answers, but has no /models route
            return ReadyCheck(ok=False, detail=f"the model server is failing (HTTP {status})")
        return ReadyCheck(ok=True, detail=f"the model server answers (HTTP {status})")


class Readiness:
    """The checks of one served Memory (`hymem.api.internals.served`); `start()` begins
    warming its embedder."""

    def __init__(self, served: Served, *, model_probe: ModelProbe | None = None) -> None:
        self._store = served.store
        self.warmup = EmbedderWarmup(served.embedder)
        self.model_probe = model_probe or ModelProbe(served.config)

    def start(self) -> None:
        self.warmup.start()

    def checks(self) -> dict[str, ReadyCheck]:
        """Every check, in the order a request meets them."""
        store, journal = self._store_checks()
        return {
            "store": store,
            "journal": journal,
            "embedder": self.warmup.check(),
            "model": self.model_probe.check(),
        }

    def _store_checks(self) -> tuple[ReadyCheck, ReadyCheck]:
        try:
            store = self._store()
        except StoreClosedError:
            closed = ReadyCheck(ok=False, detail="the store is closed")
            return closed, closed
        mode = "read-only" if store.read_only else "writable"
        journal = "settled when the store opened"
        if store.lexical_unavailable:
            journal += "; the lexical index is unavailable: searches are dense-only"
        return ReadyCheck(ok=True, detail=f"open, {mode}"), ReadyCheck(ok=True, detail=journal)


def not_ready_message(checks: dict[str, ReadyCheck]) -> str:
    """One line naming each failing check and its reason."""
    failing = [f"{name}: {check.detail}" for name, check in checks.items() if not check.ok]
    return "not ready: " + "; ".join(failing)


__all__ = ["EmbedderWarmup", "ModelProbe", "Readiness", "ReadyCheck", "not_ready_message"]
