"""Structured events through the standard library; configured by the application, never here.

The library emits with `get_logger("hymem.<module>")`: a structlog `BoundLogger` wrapping the
stdlib logger of that name with hymem's own processor chain. Nothing global is touched (no
`structlog.configure`, no handler or level set on import), so an application's structlog and
logging set-up stays exactly as it made it. Each event becomes one stdlib `LogRecord` whose
message is the event as one JSON line (event, level, logger, timestamp, fields) and whose
`hymem_event` attribute is the event dict itself, for handlers that want the fields.

Levels are the standard library's. With logging unconfigured, Python's last-resort handler
prints warnings and above to stderr and info/debug events are dropped before any rendering
(`filter_by_level` is the first processor). To see more, configure `logging` as usual (e.g.
`logging.getLogger("hymem").setLevel(logging.INFO)` plus a handler) or call
`configure_logging("info")`, which is what the command line does with `HYMEM_LOG_LEVEL`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error")
EVENT_ATTR = "hymem_event"  # the LogRecord attribute that carries the event dict

EventDict = MutableMapping[str, Any]
_render_json = structlog.processors.JSONRenderer()


def _to_record(logger: Any, method_name: str, event_dict: EventDict) -> tuple[Any, Any]:
    """Last processor: (args, kwargs) for the stdlib call -- the JSON line as the message and
    the event dict as an `extra` attribute of the record."""
    line = _render_json(logger, method_name, event_dict)
    # exc_info=False: the traceback is already in the line as data (`exception`); stdlib's
    # Logger.exception() would otherwise append it again as text.
    return (line,), {"extra": {EVENT_ATTR: dict(event_dict)}, "exc_info": False}


_PROCESSORS = (
    structlog.stdlib.filter_by_level,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    # Tracebacks as data, without frame locals: those hold conversation text and credentials.
    structlog.processors.ExceptionRenderer(
        structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
    ),
    _to_record,
)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """The event logger for one hymem module (`name` is `hymem.<module>`)."""
    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        logging.getLogger(name),
        processors=list(_PROCESSORS),
        wrapper_class=structlog.stdlib.BoundLogger,
        context_class=dict,
        cache_logger_on_first_use=True,
    )
    return logger


class _Handler(logging.StreamHandler[TextIO]):
    """The handler `configure_logging` installs; marked so a second call replaces it."""


def configure_logging(level: str = "warning", *, stream: TextIO | None = None) -> None:
    """For applications and the CLI: hymem's events at `level` and above as JSON lines on
    `stream` (stderr by default), on the `hymem` logger only (not propagated to the root)."""
    name = level.lower()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}: use one of {', '.join(LEVELS)}")
    logger = logging.getLogger("hymem")
    for old in [h for h in logger.handlers if isinstance(h, _Handler)]:
        logger.removeHandler(old)
    handler = _Handler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(name.upper())
    logger.propagate = False
