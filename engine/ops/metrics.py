"""Prometheus metrics of one served Memory, in a registry of their own.

`Metrics` owns a `CollectorRegistry` rather than using prometheus-client's global one, so two
apps (or two tests) in one process never collide over a metric name, and a scrape shows exactly
one Memory. It is an `Observer` (`hymem.ops.calls`): every public call hands it a `CallRecord`
once it ends, and everything about calls, asks, model usage, the write path and sleep is read
from those records' results, so no component of the engine needs to know metrics exist. The
HTTP instruments live here too (one registry) and are fed by `hymem.serve.metrics_http`; the
store's sizes and replica lag are read at scrape time (`hymem.ops.store_metrics`).

No metric carries a user id: label values stay a small fixed set (operations, roles, paths,
error classes), and who asked what is not the monitoring system's business.
"""

from __future__ import annotations

from collections.abc import Iterable

from hymem.core.types import AddResult, Answer, Usage
from hymem.core.version import __version__
from hymem.ops.calls import CallRecord
from hymem.ops.served import Served
from hymem.ops.store_metrics import DEFAULT_SIZES_TTL_S, StoreCollector
from hymem.sleep.consolidator import SleepReport
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder

# Seconds. Prometheus' default buckets stop at 10 s; an ask on a hosted model, a flush or a
# sleep can take minutes, so the tail goes on to 5 minutes.
LATENCY_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
    300.0,
)
SLEEP_CHANGES = ("new_versions", "superseded", "deleted")


class Metrics:
    """Every hymem metric of one Memory; `observe` is its `Observer` hook.

    `served` (optional: the served Memory's parts, `hymem.api.internals.served`) adds the
    scrape-time store collector and the `hymem_info` labels; without it only the call and
    HTTP instruments exist (a unit test's view)."""

    def __init__(
        self,
        served: Served | None = None,
        *,
        registry: CollectorRegistry | None = None,
        sizes_ttl_s: float = DEFAULT_SIZES_TTL_S,
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._calls(self.registry)
        self._model(self.registry)
        self._write_and_sleep(self.registry)
        self._http(self.registry)
        if served is not None:
            self._info(self.registry, served)
            self.registry.register(StoreCollector(served.store, ttl_s=sizes_ttl_s))

    # --- instruments -----------------------------------------------------------------------
    def _calls(self, r: CollectorRegistry) -> None:
        self.calls = Counter(
            "hymem_calls",
            "Public Memory calls that ended, by operation and outcome ('ok' or the class of "
            "the error raised).",
            ["operation", "outcome"],
            registry=r,
        )
        self.call_seconds = Histogram(
            "hymem_call_duration_seconds",
            "Duration of public Memory calls, errors included, by operation.",
            ["operation"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.asks = Counter(
            "hymem_asks",
            "Answers of ask by path (light or deep) and escalation reason (none, verdict, "
            "fallback, forced).",
            ["path", "escalation_reason"],
            registry=r,
        )

    def _model(self, r: CollectorRegistry) -> None:
        self.model_calls = Counter(
            "hymem_model_calls", "Model calls made by a role.", ["role"], registry=r
        )
        self.model_tokens = Counter(
            "hymem_model_tokens",
            "Model tokens by role and type (prompt or completion), as the backend reported.",
            ["role", "type"],
            registry=r,
        )
        self.model_cache_hits = Counter(
            "hymem_model_cache_hits",
            "Role calls answered from hymem's cache.",
            ["role"],
            registry=r,
        )
        self.model_retries = Counter(
            "hymem_model_retries", "Model requests retried after a failure.", ["role"], registry=r
        )
        self.model_fallbacks = Counter(
            "hymem_model_fallbacks",
            "Role calls that fell back (the model failed or answered unusably).",
            ["role"],
            registry=r,
        )

    def _write_and_sleep(self, r: CollectorRegistry) -> None:
        self.turns = Counter(
            "hymem_write_turns", "Turns accepted for the first time by add.", registry=r
        )
        self.segments = Counter(
            "hymem_write_segments", "Segments committed by add and flush.", registry=r
        )
        self.summaries = Counter(
            "hymem_write_summaries", "Summaries committed by add and flush.", registry=r
        )
        self.summarise_failures = Counter(
            "hymem_write_summarise_failures",
            "add or flush calls whose summariser failed (the turns stay pending, retried).",
            registry=r,
        )
        self.commit_seconds = Histogram(
            "hymem_write_commit_duration_seconds",
            "Duration of add and flush calls that committed segments: pending turns made "
            "durable summaries (segmenting, summarising, embedding and the journaled commit).",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.sleeps = Counter(
            "hymem_sleep_runs", "Sleep runs that ended, by dry_run.", ["dry_run"], registry=r
        )
        self.sleep_decisions = Counter(
            "hymem_sleep_decisions",
            "Sleep verdicts by decision (update, delete, ignore, rejected), dry runs included.",
            ["decision"],
            registry=r,
        )
        self.sleep_changes = Counter(
            "hymem_sleep_changes",
            "What sleep applied: new_versions, superseded, deleted.",
            ["change"],
            registry=r,
        )

    def _http(self, r: CollectorRegistry) -> None:
        labels = ["method", "route", "status"]
        self.http_requests = Counter(
            "hymem_http_requests",
            "HTTP requests answered, by method, route template and status code.",
            labels,
            registry=r,
        )
        self.http_seconds = Histogram(
            "hymem_http_request_duration_seconds",
            "HTTP request duration until the response ended, by method, route template and "
            "status code.",
            labels,
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.http_in_flight = Gauge(
            "hymem_http_requests_in_flight", "HTTP requests being answered now.", registry=r
        )

    def _info(self, r: CollectorRegistry, served: Served) -> None:
        info = Gauge(
            "hymem_info",
            "Always 1: the hymem version, model backend and embedder this server runs.",
            ["version", "llm", "embedder"],
            registry=r,
        )
        info.labels(__version__, str(served.config.llm), str(served.embedder.name)).set(1)

    # --- the Observer ----------------------------------------------------------------------
    def observe(self, call: CallRecord) -> None:
        """Count one finished call; its result says the rest (path, usage, writes, sleep)."""
        outcome = "ok" if call.error is None else type(call.error).__name__
        self.calls.labels(call.name, outcome).inc()
        self.call_seconds.labels(call.name).observe(call.seconds)
        result = call.result
        if call.error is not None or result is None:
            return
        if isinstance(result, Answer):
            reason = result.escalation_reason or "none"
            self.asks.labels(result.path, reason).inc()
        elif isinstance(result, AddResult):
            self._observe_write(result, call.seconds)
        elif isinstance(result, SleepReport):
            self._observe_sleep(result)
        usage = getattr(result, "usage", None)
        if isinstance(usage, Usage):
            self._observe_usage(usage)

    def _observe_write(self, result: AddResult, seconds: float) -> None:
        self.turns.inc(len(result.new_turn_ids))
        if result.error is not None:
            self.summarise_failures.inc()
        if result.segments_written:
            self.segments.inc(len(result.segments_written))
            self.summaries.inc(len(result.summaries_written))
            self.commit_seconds.observe(seconds)

    def _observe_sleep(self, report: SleepReport) -> None:
        self.sleeps.labels("true" if report.dry_run else "false").inc()
        for decision, count in report.decisions.items():
            if count:
                self.sleep_decisions.labels(decision).inc(count)
        for change in SLEEP_CHANGES:
            count = getattr(report, change)
            if count:
                self.sleep_changes.labels(change).inc(count)

    def _observe_usage(self, usage: Usage) -> None:
        for role, used in usage.roles.items():
            pairs: Iterable[tuple[Counter, int]] = (
                (self.model_calls.labels(role), used.calls),
                (self.model_tokens.labels(role, "prompt"), used.prompt_tokens),
                (self.model_tokens.labels(role, "completion"), used.completion_tokens),
                (self.model_cache_hits.labels(role), used.cache_hits),
                (self.model_retries.labels(role), used.retries),
                (self.model_fallbacks.labels(role), used.fallbacks),
            )
            for counter, amount in pairs:
                if amount > 0:
                    counter.inc(amount)

    # --- exposition ------------------------------------------------------------------------
    def exposition(self, accept: str | None = None) -> tuple[bytes, str]:
        """The registry in the format the scraper asked for (`Accept`: Prometheus text by
        default, OpenMetrics when requested) and that format's content type."""
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type


__all__ = ["LATENCY_BUCKETS", "Metrics"]
