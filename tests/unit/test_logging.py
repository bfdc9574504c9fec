"""hymem configures nothing global, emits through stdlib logging (warnings reach stderr with no
set-up at all), and filters by level only where the application or the CLI says so."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hymem.core.logging import configure_logging, get_logger

from tests.log_events import capture_events


@pytest.fixture(autouse=True)
def _restore_hymem_logger() -> Iterator[None]:
    logger = logging.getLogger("hymem")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = saved[0]
    logger.level, logger.propagate = saved[1], saved[2]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )


def test_import_configures_nothing_and_warnings_still_reach_stderr() -> None:
    res = _python(
        "import logging, structlog, hymem\n"
        "assert not structlog.is_configured(), 'import hymem configured structlog'\n"
        "assert logging.getLogger('hymem').handlers == []\n"
        "assert logging.getLogger().handlers == []\n"
        "from hymem.core.logging import get_logger\n"
        "log = get_logger('hymem.test')\n"
        "log.info('quiet.event', n=1)\n"
        "log.warning('loud.event', n=2)\n"
    )
    assert res.stdout == ""
    (line,) = res.stderr.splitlines()  # Python's last-resort handler: warnings and above
    event = json.loads(line)
    assert (event["event"], event["level"], event["n"]) == ("loud.event", "warning", 2)
    assert event["logger"] == "hymem.test" and "timestamp" in event


def test_configure_logging_filters_by_level_and_writes_json() -> None:
    out = io.StringIO()
    configure_logging("warning", stream=out)
    configure_logging("warning", stream=out)  # a second call replaces, never duplicates
    log = get_logger("hymem.test")
    log.info("quiet.event", n=1)
    log.warning("loud.event", n=2)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(e["event"], e["level"], e["n"]) for e in lines] == [("loud.event", "warning", 2)]


def test_records_carry_the_event_dict_for_handlers() -> None:
    configure_logging("error", stream=io.StringIO())
    with capture_events() as events:
        get_logger("hymem.test").info("seen.anyway", user_id="u")
    assert [(e["event"], e["user_id"]) for e in events] == [("seen.anyway", "u")]


def test_exceptions_are_rendered_as_data() -> None:
    out = io.StringIO()
    configure_logging("error", stream=out)
    try:
        raise ValueError("boom")
    except ValueError:
        get_logger("hymem.test").exception("failed.event")
    (event,) = [json.loads(line) for line in out.getvalue().splitlines()]
    (exc,) = event["exception"]
    assert event["event"] == "failed.event" and exc["exc_type"] == "ValueError"
    assert all("locals" not in frame for frame in exc["frames"])  # texts and keys stay out


def test_unknown_level_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        configure_logging("chatty")
