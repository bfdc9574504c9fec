"""structlog set-up for the command line.

The library emits events with `structlog.get_logger("hymem.<module>")`. structlog left
unconfigured prints every event, debug included, to stdout, which is no default for a library:
so on import, and only if the application has not configured structlog itself, hymem installs
`configure_logging("warning")` -- JSON lines on stderr, warnings and above. An application that
configures structlog (before or after importing hymem) keeps full control. The CLI calls
`configure_logging(HYMEM_LOG_LEVEL)` so events never interleave with its tables on stdout.

Levels are filtered by a processor, not by the bound-logger class, so
`structlog.testing.capture_logs()` still sees every event.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, MutableMapping
from typing import Any, TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error")
_RANK = {name: i for i, name in enumerate(LEVELS)} | {"critical": len(LEVELS), "exception": 3}


EventDict = MutableMapping[str, Any]


def _level_filter(threshold: str) -> Callable[[object, str, EventDict], EventDict]:
    floor = _RANK[threshold]

    def drop_below(_logger: object, method_name: str, event_dict: EventDict) -> EventDict:
        if _RANK.get(method_name, floor) < floor:
            raise structlog.DropEvent
        return event_dict

    return drop_below


def configure_logging(level: str = "warning", *, stream: TextIO | None = None) -> None:
    name = level.lower()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}: use one of {', '.join(LEVELS)}")
    structlog.configure(
        processors=[
            _level_filter(name),
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )


def configure_default_logging() -> None:
    """Quiet default for library use; a no-op when the application configured structlog."""
    if not structlog.is_configured():
        configure_logging("warning")
