"""`hymem webhooks`: what the webhook outbox holds, per endpoint, without opening the memory
(so it never starts delivering itself and works beside the running writer). An endpoint
without a name is filed under its URL, which may carry a token: URLs are shown redacted."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from hymem.api.memory_args import check_creatable, store_location
from hymem.cli.app import DEFAULT_STORE, StorePath, app
from hymem.core.config import MemoryConfig
from hymem.core.webhook_endpoint import redact_url, redact_urls
from hymem.ops.webhooks.observer import outbox_path
from hymem.ops.webhooks.outbox import EndpointStatus, Outbox
from rich.console import Console
from rich.table import Table

_console = Console()


def _when(stamp: float | None) -> str:
    if stamp is None:
        return ""
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _outbox_file(store: str, given: str | None, config: MemoryConfig) -> Path:
    """`--outbox`, else the store's own outbox (`webhook_outbox` or `<store>/webhooks/`)."""
    if given:
        return Path(given).expanduser()
    location = store_location(store, None, config)
    check_creatable(location, create=False, read_only=True)  # no memory there: an error
    return outbox_path(config, location)


def _with_configured(found: list[EndpointStatus], config: MemoryConfig) -> list[EndpointStatus]:
    """Configured endpoints with no rows yet show as zeros, so a typo in a name is visible."""
    known = {s.endpoint for s in found}
    empty = [
        EndpointStatus(e.key, 0, 0, 0, None, None, None, None)
        for e in config.webhooks
        if e.key not in known
    ]
    return sorted([*found, *empty], key=lambda s: s.endpoint)


def _shown(status: EndpointStatus) -> EndpointStatus:
    """The status as printed: its endpoint key and last error with URLs redacted."""
    error = None if status.last_error is None else redact_urls(status.last_error)
    return replace(status, endpoint=redact_url(status.endpoint), last_error=error)


def _shown_row(row: dict[str, object]) -> dict[str, object]:
    """A dead row as printed: no body, the endpoint and the error with URLs redacted."""
    shown = {k: v for k, v in row.items() if k != "body"}
    shown["endpoint"] = redact_url(str(row["endpoint"]))
    if isinstance(row.get("last_error"), str):
        shown["last_error"] = redact_urls(str(row["last_error"]))
    return shown


def _status_table(statuses: list[EndpointStatus], configured: set[str]) -> Table:
    table = Table("endpoint", "pending", "delivered", "dead", "next attempt (UTC)", "last error")
    for raw in statuses:
        s = _shown(raw)
        name = s.endpoint if raw.endpoint in configured else f"{s.endpoint} (not configured)"
        error = f"{s.last_error} at {_when(s.last_error_at)}" if s.last_error else ""
        table.add_row(
            name, str(s.pending), str(s.delivered), str(s.dead), _when(s.next_attempt_at), error
        )
    return table


@app.command("webhooks")
def webhooks_cmd(
    store: StorePath = DEFAULT_STORE,
    outbox: Annotated[
        str | None,
        typer.Option(
            "--outbox", help="the outbox file (default: webhook_outbox, or <store>/webhooks/)"
        ),
    ] = None,
    dead: Annotated[bool, typer.Option("--dead", help="also list every dead delivery")] = False,
    retry_dead: Annotated[
        bool, typer.Option("--retry-dead", help="make dead deliveries pending again, due now")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """The webhook outbox: per endpoint, events pending, delivered (kept 7 days) and dead
    (out of attempts), when the next attempt is due and the last error. Endpoints come from
    HYMEM_WEBHOOKS; the running writer delivers, this command only looks (or, with
    --retry-dead, makes dead rows pending for the writer to send within 30 s)."""
    config = MemoryConfig()
    path = _outbox_file(store, outbox, config)
    if not path.is_file():
        _console.print(f"no webhook outbox at {path}: no event has been recorded there yet")
        return
    box = Outbox(path)
    try:
        retried = box.retry_dead() if retry_dead else 0
        statuses = _with_configured(box.status(), config)
        dead_rows = box.rows(state="dead") if dead else []
    finally:
        box.close()
    if as_json:
        rows = [asdict(_shown(s)) for s in statuses]
        dead_out = [_shown_row(r) for r in dead_rows]
        typer.echo(json.dumps({"outbox": str(path), "endpoints": rows, "dead": dead_out}))
        return
    configured = {e.key for e in config.webhooks}
    _console.print(f"outbox {path}")
    _console.print(_status_table(statuses, configured))
    if retry_dead:
        _console.print(f"{retried} dead deliveries made pending again")
    if dead_rows:
        table = Table("event", "endpoint", "type", "user", "attempts", "last error")
        keys = ("event_id", "endpoint", "type", "user_id", "attempts", "last_error")
        for r in map(_shown_row, dead_rows):
            table.add_row(*("" if r[k] is None else str(r[k]) for k in keys))
        _console.print(table)


__all__ = ["webhooks_cmd"]
