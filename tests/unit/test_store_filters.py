"""Filters are built from escaped literals only."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.core.errors import UserInputError
from hymem.indexes.lance import sql as F


def test_single_quotes_are_doubled() -> None:
    assert F.sql_literal("x' OR '1'='1") == "'x'' OR ''1''=''1'"
    assert F.eq("user_id", "o'brien") == "user_id = 'o''brien'"


def test_other_characters_pass_through_inside_the_literal() -> None:
    assert F.sql_literal('a"b;--\\') == "'a\"b;--\\'"


def test_nul_and_non_strings_rejected() -> None:
    with pytest.raises(UserInputError):
        F.sql_literal("a\x00b")
    with pytest.raises(UserInputError):
        F.sql_literal(3)  # type: ignore[arg-type]


def test_in_list_escapes_and_dedupes_and_handles_empty() -> None:
    assert F.in_list("id", ["a", "b'", "a"]) == "id IN ('a', 'b''')"
    assert F.in_list("id", []) == "false"


def test_time_overlap_clauses() -> None:
    since, until = datetime(2023, 1, 1), datetime(2023, 2, 1, 12, 30)
    assert F.time_overlap(None, None) is None
    both = F.time_overlap(since, until)
    assert both is not None
    assert "coalesce(time_end, time_start) >= CAST('2023-01-01T00:00:00' AS TIMESTAMP)" in both
    assert "coalesce(time_start, time_end) <= CAST('2023-02-01T12:30:00' AS TIMESTAMP)" in both
    with pytest.raises(UserInputError):
        F.ts_literal("2023-01-01")  # type: ignore[arg-type]


def test_conjunction_skips_empty_parts() -> None:
    assert F.conjunction([None, "a = 1", ""]) == "(a = 1)"
    assert F.conjunction([]) == "true"
