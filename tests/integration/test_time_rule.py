"""One rule for every time argument (issue #27): `add(timestamp=)` and a message's own
timestamp, `search(since=, until=, as_of=)`, `ask`/`context(as_of=)` and `traces(since=)` take
the same forms and give the same value the same answer: all accept it, as the same UTC instant,
or all refuse it with `UserInputError` naming the argument.

Before: `add` stored `0001-01-01T00:00:00+14:00` clamped to year 1 (dateparser re-read the ISO
string and dropped its offset), `search(since=)` refused it, `as_of` accepted it, and
`search(since="2024-01-01")` raised a raw AttributeError."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hymem import Memory
from hymem.core.config import MemoryConfig
from hymem.core.errors import UserInputError
from hymem.read.params import AskParams
from hymem.search.scope import SearchScope
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.integration

REFUSED = "refused"
_users = itertools.count()


class Spy:
    """What the layers below `Memory` were handed: the checked scope, ask or traces bound.
    They answer nothing, so one example costs a parse, not a search."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def scope(self, query: str, scope: SearchScope, vector: object = None) -> list[object]:
        self.seen.append(scope)
        return []

    def ask(self, params: AskParams) -> Any:
        self.seen.append(params)
        return SimpleNamespace(evidence=["seen"])  # evidence: no pending-turns check follows

    def context(self, params: AskParams) -> list[object]:
        self.seen.append(params)
        return []

    def traces(self, user_id: str | None = None, since: datetime | None = None) -> list[object]:
        self.seen.append(since)
        return []

    def last(self) -> Any:
        return self.seen[-1]


@pytest.fixture(scope="module")
def spied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, Spy]]:
    folder: Path = tmp_path_factory.mktemp("rule") / "m"
    spy = Spy()
    with Memory(folder, config=MemoryConfig.defaults(embedder="hashing:64")) as mem:
        mem._searcher.find = spy.scope  # type: ignore[method-assign]  # observe, answer nothing
        mem._reader.ask = spy.ask  # type: ignore[method-assign]  # observe, answer nothing
        mem._reader.context = spy.context  # type: ignore[method-assign]  # observe, answer nothing
        mem._store.read_traces = spy.traces  # type: ignore[method-assign]  # observe only
        yield mem, spy


def _calls(mem: Memory, spy: Spy) -> dict[str, Callable[[object], datetime | None]]:
    """Each public time argument, as a function from the value to the instant it was used as."""

    def add(value: object) -> datetime:
        user = f"u{next(_users)}"
        mem.add("the kettle boiled", user_id=user, timestamp=value)  # type: ignore[arg-type]
        return mem.pending(user_id=user)[0].timestamp

    def message(value: object) -> datetime:
        user = f"u{next(_users)}"
        mem.add([{"role": "user", "content": "tea", "timestamp": value}], user_id=user)
        return mem.pending(user_id=user)[0].timestamp

    def since(value: object) -> datetime | None:
        mem.search("tea", user_id="u", since=value)  # type: ignore[arg-type]
        return spy.last().since

    def until(value: object) -> datetime | None:
        mem.search("tea", user_id="u", until=value)  # type: ignore[arg-type]
        return spy.last().until

    def search_as_of(value: object) -> datetime | None:
        mem.search("tea", user_id="u", as_of=value)  # type: ignore[arg-type]
        return spy.last().until

    def ask_as_of(value: object) -> datetime | None:
        mem.ask("tea?", user_id="u", as_of=value)  # type: ignore[arg-type]
        return spy.last().as_of

    def context_as_of(value: object) -> datetime | None:
        mem.context("tea?", user_id="u", as_of=value)  # type: ignore[arg-type]
        return spy.last().as_of

    def traces_since(value: object) -> datetime | None:
        mem.traces(user_id="u", since=value)  # type: ignore[arg-type]
        return spy.last()

    return {
        "add(timestamp=)": add,
        "message timestamp": message,
        "search(since=)": since,
        "search(until=)": until,
        "search(as_of=)": search_as_of,
        "ask(as_of=)": ask_as_of,
        "context(as_of=)": context_as_of,
        "traces(since=)": traces_since,
    }


def _answers(mem: Memory, spy: Spy, value: object) -> dict[str, object]:
    answers: dict[str, object] = {}
    for name, call in _calls(mem, spy).items():
        try:
            answers[name] = call(value)
        except UserInputError:
            answers[name] = REFUSED
    return answers


def _utc(value: datetime) -> datetime | str:
    """The instant by hand: wall time minus the offset, or refused outside years 1..9999."""
    offset = value.utcoffset()
    try:
        return value.replace(tzinfo=None) - (offset or timedelta(0))
    except OverflowError:
        return REFUSED


offsets = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m)))
instants = st.datetimes(datetime.min, datetime.max, timezones=st.none() | offsets)
WEST, EAST = timezone(timedelta(hours=-1)), timezone(timedelta(hours=14))


def _iso(value: datetime, utc_as_z: bool) -> str:
    text = value.isoformat()
    return text[:-6] + "Z" if utc_as_z and text.endswith("+00:00") else text


EDGES = [
    "0001-01-01T00:00:00+14:00",  # 31 Dec of year 0 in UTC
    "9999-12-31T23:59:59-01:00",  # year 10000 in UTC
    "0001-01-01T00:00:00-14:00",
    "9999-12-31T23:59:59+01:00",
    "2024-01-01",
    "2024-01-01T10:00:00Z",
]


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=instants, as_text=st.booleans(), utc_as_z=st.booleans())
@example(value=datetime.max.replace(tzinfo=WEST), as_text=True, utc_as_z=False)
@example(value=datetime.min.replace(tzinfo=EAST), as_text=True, utc_as_z=False)
@example(value=datetime.min.replace(tzinfo=EAST), as_text=False, utc_as_z=False)
@example(value=datetime(2024, 1, 1, tzinfo=UTC), as_text=True, utc_as_z=True)
def test_every_time_argument_gives_a_datetime_or_iso_string_the_same_answer(
    spied: tuple[Memory, Spy], value: datetime, as_text: bool, utc_as_z: bool
) -> None:
    mem, spy = spied
    given_value: object = _iso(value, utc_as_z) if as_text else value
    answers = _answers(mem, spy, given_value)
    assert set(answers.values()) == {_utc(value)}, answers


@pytest.mark.parametrize("text", EDGES)
def test_the_edges_of_the_range_get_one_answer_everywhere(
    spied: tuple[Memory, Spy], text: str
) -> None:
    mem, spy = spied
    answers = _answers(mem, spy, text)
    expected = _utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    assert set(answers.values()) == {expected}, answers


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(day=st.dates(min_value=date.min, max_value=date.max), as_text=st.booleans())
def test_a_date_is_midnight_utc_everywhere(
    spied: tuple[Memory, Spy], day: date, as_text: bool
) -> None:
    mem, spy = spied
    answers = _answers(mem, spy, day.isoformat() if as_text else day)
    assert set(answers.values()) == {datetime(day.year, day.month, day.day)}, answers


@pytest.mark.parametrize(
    "value", ["", "yesterday", "2024-13-01", "not a date", True, float("nan"), 1e20, [2024]]
)
def test_what_one_argument_refuses_every_argument_refuses_naming_itself(
    spied: tuple[Memory, Spy], value: object
) -> None:
    mem, spy = spied
    assert set(_answers(mem, spy, value).values()) == {REFUSED}
    for name, call in [
        ("since", lambda: mem.search("q", user_id="u", since=value)),  # type: ignore[arg-type]
        ("until", lambda: mem.search("q", user_id="u", until=value)),  # type: ignore[arg-type]
        ("as_of", lambda: mem.ask("q", user_id="u", as_of=value)),  # type: ignore[arg-type]
        ("since", lambda: mem.traces(user_id="u", since=value)),  # type: ignore[arg-type]
        ("timestamp", lambda: mem.add("x", user_id="u", timestamp=value)),  # type: ignore[arg-type]
    ]:
        with pytest.raises(UserInputError, match=name):
            call()


def test_an_iso_string_bound_is_the_same_bound_as_its_datetime(
    spied: tuple[Memory, Spy],
) -> None:
    """Before: AttributeError: 'str' object has no attribute 'tzinfo'."""
    mem, spy = spied
    mem.search("q", user_id="u", since="2024-01-01", until="2024-02-01T00:00:00+01:00")
    scope = spy.last()
    assert (scope.since, scope.until) == (datetime(2024, 1, 1), datetime(2024, 1, 31, 23, 0))


def test_offsets_in_other_formats_are_applied_not_dropped() -> None:
    """dateparser's forms honour an offset too (before: `+0200` was silently ignored)."""
    from hymem.core.time import parse_time

    assert parse_time("8 May 2023 13:56 +0200", "since") == datetime(2023, 5, 8, 11, 56)
    assert parse_time("May 8, 2023 13:56 -05:00", "since") == datetime(2023, 5, 8, 18, 56)
    assert parse_time("8 May 2023 13:56", "since") == datetime(2023, 5, 8, 13, 56)
    with pytest.raises(UserInputError, match=r"since: .*out of range"):
        parse_time("1 Jan 0001 00:00 +0100", "since")


def test_the_readme_states_the_one_rule() -> None:
    errors = (Path(__file__).parents[2] / "docs" / "errors.md").read_text(encoding="utf-8")
    flat = " ".join(errors.split())
    assert "**One rule for timestamps.**" in flat
    assert "The same value gets the same answer everywhere" in flat
    assert "is refused, never clamped" in flat
    for argument in ("add(timestamp=)", "search(since=, until=, as_of=)", "traces(since=)"):
        assert argument in flat
