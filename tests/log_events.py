"""`capture_events()`: the hymem events emitted inside a block, as the dicts the library logged.

hymem logs through the standard library (see `hymem.core.logging`), so structlog's `capture_logs`
does not see its events; this attaches a handler to the `hymem` logger instead and reads each
record's event dict. The logger's level is lowered for the block so info and debug events are
seen too, then restored."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hymem.core.logging import EVENT_ATTR


class _Collect(logging.Handler):
    def __init__(self, into: list[dict[str, Any]]) -> None:
        super().__init__(logging.DEBUG)
        self._into = into

    def emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, EVENT_ATTR, None)
        if event is not None:
            self._into.append(event)


@contextmanager
def capture_events(level: int = logging.DEBUG) -> Iterator[list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    logger = logging.getLogger("hymem")
    handler = _Collect(events)
    saved = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield events
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved)
