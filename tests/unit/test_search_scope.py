"""The arguments of a search and of an ask, checked once at the edge into typed values
(`search_scope`, `ask_params`): what they normalise, and that the layers below get them as
given."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import UserInputError
from hymem.core.types import Level
from hymem.indexes.protocol import ACTIVE_ONLY
from hymem.read.candidates import LIGHT_EXTRA, summary_depth
from hymem.read.params import ask_params
from hymem.read.scheduler import ReadPlan
from hymem.search.scope import SearchScope, search_scope

T = datetime(2023, 5, 8, 12, 0)


def test_a_search_scope_is_normalised_once() -> None:
    east = timezone(timedelta(hours=2))
    scope = search_scope(
        "q",
        user_id="u",
        k=5,
        level="segment",
        mode="dense",
        since=T.replace(tzinfo=east),
        until=T + timedelta(days=30),
        as_of="2023-05-20T00:00:00Z",
        filters={"topic": "garden"},
        agent_id="a1",
    )
    assert (scope.user_id, scope.k, scope.level, scope.mode) == ("u", 5, Level.SEGMENT, "dense")
    assert scope.since == T - timedelta(hours=2)  # naive UTC
    assert scope.until == datetime(2023, 5, 20)  # as_of is earlier than until: it bounds
    assert scope.filters is not None
    assert scope.filters.matches({"topic": "garden", "agent_id": "a1"})
    assert not scope.filters.matches({"topic": "garden", "agent_id": "a2"})


def test_rows_carry_the_scope_to_the_store() -> None:
    scope = SearchScope("u", k=3, until=T)
    rows = scope.rows()
    assert (rows.user_id, rows.level, rows.statuses, rows.time_range) == (
        "u",
        Level.SUMMARY,
        ACTIVE_ONLY,
        (None, T),
    )
    assert SearchScope("u", include_inactive=True).rows().statuses is None
    assert SearchScope("u").time_range is None
    deeper = scope.sized(40, Level.SEGMENT)
    assert (deeper.k, deeper.level, deeper.until) == (40, Level.SEGMENT, T)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 10**9}, "max_k"),
        ({"k": True}, "k must be"),
        ({"mode": "fuzzy"}, "mode"),
        ({"level": "turn"}, "unknown level"),
        ({"until": "the day after"}, "until"),
        ({"run_id": "  "}, "run_id"),
    ],
)
def test_a_bad_search_argument_is_named(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(UserInputError, match=match):
        search_scope("q", user_id="u", **kwargs)  # type: ignore[arg-type]


def test_the_query_is_checked_against_the_given_limit() -> None:
    with pytest.raises(UserInputError, match="max_query_chars"):
        search_scope("x" * 11, user_id="u", max_query_chars=10)


def test_ask_params_take_the_config_defaults_and_bound_by_as_of() -> None:
    cfg = MemoryConfig.defaults(k=7, n_deep=21, select_batch=4, max_iterations=2)
    params = ask_params("q", user_id="u", config=cfg, as_of=datetime(2023, 5, 8, tzinfo=UTC))
    assert params.plan == ReadPlan("auto", 7, 21, 4, 2, light_tokens=400)  # by budget
    assert params.as_of == params.scope.until == datetime(2023, 5, 8)
    assert params.user_id == "u" and params.scope.filters is None
    chosen = ask_params("q", user_id="u", config=cfg, depth="deep", k=3, N=9, d=2, run_id="r")
    assert chosen.plan == ReadPlan("deep", 3, 9, 2, 2)  # an explicit k: the top k, no budget
    assert chosen.scope.filters is not None and chosen.scope.filters.matches({"run_id": "r"})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"N": 10**9}, "N="),
        ({"d": 0}, "d must be"),
        ({"depth": "wide"}, "depth"),
        ({"max_iterations": 21}, "max_iterations"),
        ({"user_id": ""}, "user_id"),
    ],
)
def test_a_bad_ask_argument_is_named(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"user_id": "u", **kwargs}
    with pytest.raises(UserInputError, match=match):
        ask_params("q", config=MemoryConfig.defaults(), **args)  # type: ignore[arg-type]


def test_one_summary_search_serves_the_light_and_the_deep_read() -> None:
    assert summary_depth(ReadPlan("light", k=10, n_deep=30)) == 10 + LIGHT_EXTRA
    assert summary_depth(ReadPlan("deep", k=10, n_deep=30)) == 30
    assert summary_depth(ReadPlan("auto", k=10, n_deep=30)) == 30
    assert summary_depth(ReadPlan("auto", k=25, n_deep=30)) == 25 + LIGHT_EXTRA
