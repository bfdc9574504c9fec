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


def test_as_of_hides_what_was_said_later_in_every_mode(mem: Memory) -> None:
    as_of = "2023-05-04T00:00:00+02:00"  # 3 May 22:00 UTC: only the 1 and 3 May turns precede it
    bound = datetime(2023, 5, 3, 22, 0)
    for mode in ("dense", "lexical", "hybrid"):
        hits = mem.search("apple tree garden", user_id="ann", k=50, mode=mode, as_of=as_of)
        assert {h.id for h in hits} == _ids(mem, mode, datetime(2000, 1, 1), bound), mode
        assert hits and all(h.time_start is not None and h.time_start <= bound for h in hits)


def test_ask_as_of_is_parsed_bounded_and_traced(mem: Memory) -> None:
    ans = mem.ask(
        "Which apple tree did Ann plant?", user_id="ann", depth="light", as_of="4 May 2023"
    )
    assert ans.as_of == datetime(2023, 5, 4)
    assert all(h.time_start is not None and h.time_start <= ans.as_of for h in ans.evidence)
    trace = next(t for t in mem.traces(user_id="ann") if t.trace_id == ans.trace_id)
    assert trace.as_of == datetime(2023, 5, 4)
    ctx = mem.context("Which apple tree?", user_id="ann", as_of=datetime(2023, 5, 2))
    assert ctx and all(
        h.time_start is not None and h.time_start <= datetime(2023, 5, 2) for h in ctx
    )


@pytest.mark.parametrize("bad", ["yesterday", "", 12.5j, True])
def test_an_unparseable_as_of_is_a_user_input_error(mem: Memory, bad: object) -> None:
    from hymem.core.errors import UserInputError

    with pytest.raises(UserInputError):
        mem.search("apple", user_id="ann", as_of=bad)  # type: ignore[arg-type]
    with pytest.raises(UserInputError):
        mem.ask("apple?", user_id="ann", depth="light", as_of=bad)  # type: ignore[arg-type]
