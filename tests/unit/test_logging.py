"""hymem is quiet by default, filters by level, and never hides events from capture_logs."""

from __future__ import annotations

import io
import json

import pytest
import structlog
from hymem.logging import configure_logging


@pytest.fixture(autouse=True)
def _restore_structlog():  # type: ignore[no-untyped-def]
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def test_events_below_the_level_are_dropped_and_the_rest_are_json() -> None:
    out = io.StringIO()
    configure_logging("warning", stream=out)
    log = structlog.get_logger("hymem.test")
    log.info("quiet.event", n=1)
    log.warning("loud.event", n=2)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(e["event"], e["level"], e["n"]) for e in lines] == [("loud.event", "warning", 2)]


def test_capture_logs_still_sees_info_events() -> None:
    configure_logging("error", stream=io.StringIO())
    with structlog.testing.capture_logs() as events:
        structlog.get_logger("hymem.test").info("seen.anyway")
    assert [e["event"] for e in events] == ["seen.anyway"]


def test_unknown_level_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        configure_logging("chatty")
