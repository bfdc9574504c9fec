"""One time model: naive datetimes are UTC, aware ones are converted at the edge, and every
search mode applies the same bounds (the suite also runs under TZ=Pacific/Kiritimati in CI)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hymem import Memory

pytestmark = pytest.mark.integration

DAYS = [datetime(2023, 5, d, 12, 0) for d in (1, 3, 5, 7, 9)]  # naive = UTC
OFFSETS = [timedelta(hours=h) for h in (-11, -5, 0, 5.5, 14)]


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    folder: Path = tmp_path_factory.mktemp("tz") / "m"
    with Memory(folder, embedder="hashing") as m:
        for i, day in enumerate(DAYS):
            m.add(
                [{"speaker": "Ann", "text": f"Ann planted apple tree number {i} in the garden."}],
                user_id="ann",
                session_id=f"s{i}",
                timestamp=day,
            )
        m.flush(user_id="ann")
        yield m


def _ids(mem: Memory, mode: str, since: datetime, until: datetime) -> set[str]:
    hits = mem.search("apple tree garden", user_id="ann", k=50, mode=mode, since=since, until=until)
    return {h.id for h in hits}


def test_every_day_is_stored_and_found(mem: Memory) -> None:
    everything = _ids(mem, "hybrid", datetime(2000, 1, 1), datetime(2100, 1, 1))
    assert len(everything) >= len(DAYS)


@pytest.mark.parametrize("offset", OFFSETS, ids=lambda o: f"{o.total_seconds() / 3600:+g}h")
def test_aware_bounds_match_naive_utc_in_every_mode(mem: Memory, offset: timedelta) -> None:
    since_utc, until_utc = datetime(2023, 5, 3, 6, 0), datetime(2023, 5, 5, 18, 0)
    zone = timezone(offset)
    since = since_utc.replace(tzinfo=UTC).astimezone(zone)
    until = until_utc.replace(tzinfo=UTC).astimezone(zone)
    expected = _ids(mem, "dense", since_utc, until_utc)
    assert expected, "the range holds the 3 May and 5 May summaries"
    for mode in ("dense", "lexical", "hybrid"):
        assert _ids(mem, mode, since, until) == expected, mode
        assert _ids(mem, mode, since_utc, until_utc) == expected, mode


def test_aware_bounds_exclude_what_naive_local_reading_would_include(mem: Memory) -> None:
    """17:00 on 9 May at +14:00 is 03:00 on 9 May UTC: before the 12:00 UTC turn of that day."""
    until = datetime(2023, 5, 9, 17, 0, tzinfo=timezone(timedelta(hours=14)))
    since = datetime(2023, 5, 8, 0, 0, tzinfo=UTC)
    for mode in ("dense", "lexical", "hybrid"):
        assert _ids(mem, mode, since, until) == set(), mode


def test_traces_since_accepts_aware_and_naive_utc(mem: Memory) -> None:
    before = datetime.now(UTC) - timedelta(seconds=5)
    mem.ask("Where did Ann plant the apple tree?", user_id="ann", depth="light")
    far_east = before.astimezone(timezone(timedelta(hours=14)))
    assert len(mem.traces(user_id="ann", since=far_east)) == 1
    assert len(mem.traces(user_id="ann", since=before.replace(tzinfo=None))) == 1
    assert mem.traces(user_id="ann", since=datetime.now(UTC) + timedelta(hours=1)) == []
