"""structlog set-up for the command line.

The library only emits events (`structlog.get_logger("hymem.<module>")`); it never configures
logging on import, so an application embedding hymem keeps control. The CLI calls
`configure_logging` once: JSON lines on stderr, warnings and above by default, so events never
interleave with progress bars or tables on stdout.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error")


def configure_logging(level: str = "warning", *, stream: TextIO | None = None) -> None:
    name = level.lower()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}: use one of {', '.join(LEVELS)}")
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, name.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
