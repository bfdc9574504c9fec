"""Reading LongMemEval's format strictly: dates, turn ids, .json and .json.gz, and every kind of
bad input contained where it is found (a skipped item named by its question id) or refused
with DatasetFormatError when the file is not the format at all."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import hymem.core.errors
import pytest
from hymem.core.errors import UserInputError
from hymem.evaluation.errors import DatasetFormatError
from hymem.evaluation.longmemeval.data import (
    load_longmemeval,
    parse_lme_date,
    parse_longmemeval,
    selected_skips,
)

from tests.fixtures_lme import LME_ABSTENTION, LME_MINI, lme_data
from tests.log_events import capture_events

Variant = Callable[[Callable[[list[dict[str, Any]]], None]], Path]


def test_parse_lme_date_reads_the_benchmark_stamp() -> None:
    assert parse_lme_date("2023/05/30 (Tue) 23:40") == datetime(2023, 5, 30, 23, 40)
    assert parse_lme_date("2024/02/29 (Thu) 00:05") == datetime(2024, 2, 29, 0, 5)


@pytest.mark.parametrize(
    "text",
    [
        "2023/05/30 (Wed) 23:40",  # the weekday disagrees with the date
        "2023/02/30 (Thu) 10:00",  # no such day
        "2023/05/30 (Tue) 24:10",  # no such hour
        "2023-05-30 23:40",  # another format
        "2023/05/30 23:40",  # no weekday
        " 2023/05/30 (Tue) 23:40",  # stray space
        "",
        None,
        20230530,
    ],
)
def test_parse_lme_date_refuses_anything_else(text: object) -> None:
    with pytest.raises(UserInputError):
        parse_lme_date(text)


def test_loads_json_and_json_gz_alike(lme_gz: Path) -> None:
    plain = load_longmemeval(LME_MINI)
    packed = load_longmemeval(lme_gz)
    assert plain == packed
    assert len(plain.questions) == 6 and plain.skipped == []
    abstention = [q for q in plain.questions if q.abstention]
    assert [q.question_id for q in abstention] == [LME_ABSTENTION]


def test_turn_ids_count_every_turn_of_both_roles() -> None:
    q = {q.question_id: q for q in load_longmemeval(LME_MINI).questions}["q_ssa_05"]
    session = q.sessions[1]
    assert [t.id for t in session.turns] == [f"answer_ssa05_1_{i}" for i in range(1, 5)]
    assert [t.role for t in session.turns] == ["user", "assistant", "user", "assistant"]
    assert [t.has_answer for t in session.turns] == [False, True, False, False]
    assert q.question_date == datetime(2023, 8, 1, 10, 30)


def test_sessions_are_fed_oldest_first_whatever_the_file_order(lme_variant: Variant) -> None:
    def shuffle(data: list[dict[str, Any]]) -> None:
        q = data[0]
        for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
            q[key] = q[key][::-1]

    q = load_longmemeval(lme_variant(shuffle)).questions[0]
    assert q.sessions[0].id == "ultrachat_travel_01"
    assert [s.id for s in q.sessions_in_time_order()] == [
        "sharegpt_pasta_01",
        "answer_ssu01_1",
        "ultrachat_travel_01",
    ]


def test_bad_items_are_skipped_and_named(lme_variant: Variant) -> None:
    def damage(data: list[dict[str, Any]]) -> None:
        data[0]["question_date"] = "yesterday"  # question skipped
        data[1]["haystack_dates"][1] = "2023/06/08 11:40"  # that session dropped
        data[2]["haystack_sessions"][1][0]["content"] = "   "  # that turn not ingested
        del data[3]["answer_session_ids"]  # question skipped: missing key

    with capture_events() as logs:
        ds = load_longmemeval(lme_variant(damage))
    ids = [q.question_id for q in ds.questions]
    assert ids == ["q_ms_02", "q_ku_03", "q_ssa_05", "q_ssu_06_abs"]
    by_kind = {(s.kind, s.question_id): s for s in ds.skipped}
    assert "yesterday" in by_kind[("question", "q_ssu_01")].reason
    assert "answer_session_ids" in by_kind[("question", "q_tr_04")].reason
    assert by_kind[("session", "q_ms_02")].item == "sharegpt_laptop_02"
    assert by_kind[("turn", "q_ku_03")].item == "sharegpt_budget_03_1"
    ku = ds.questions[1]
    assert [t.usable for t in ku.sessions[1].turns] == [False, True, True, True]
    assert [t.id for t in ku.sessions[1].turns][1] == "sharegpt_budget_03_2"  # numbering kept
    assert len(ds.questions[0].sessions) == 3
    # The loader records and does not warn: which skips matter depends on a run's selection.
    assert not [e for e in logs if e["event"] == "longmemeval.skip"]
    chosen = [(s.kind, s.question_id) for s in selected_skips(ds, ["q_ku_03"])]
    assert chosen == [("question", "q_ssu_01"), ("turn", "q_ku_03"), ("question", "q_tr_04")]


def test_repeated_session_is_kept_once_and_conflicting_repeat_skips_question() -> None:
    data = lme_data()[:2]
    q = data[0]
    q["haystack_session_ids"].append(q["haystack_session_ids"][0])
    q["haystack_dates"].append("2023/06/01 (Thu) 09:00")
    q["haystack_sessions"].append(q["haystack_sessions"][0])
    ds = parse_longmemeval(data)
    assert len(ds.questions[0].sessions) == 3
    assert [(s.kind, s.item) for s in ds.skipped] == [("session", "sharegpt_pasta_01")]
    data[0]["haystack_sessions"][-1] = [{"role": "user", "content": "something else"}]
    ds = parse_longmemeval(data)
    assert [q.question_id for q in ds.questions] == ["q_ms_02"]
    assert "different turns" in ds.skipped[0].reason


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda q: q.update(haystack_dates=q["haystack_dates"][:-1]), "differ in length"),
        (lambda q: q.update(haystack_sessions="nope"), "must be lists"),
        (lambda q: q["haystack_sessions"][0].append({"content": "x"}), "has no role"),
        (lambda q: q["haystack_sessions"][0].append({"role": "user"}), "no text content"),
        (lambda q: q.update(question="  "), "empty question"),
    ],
)
def test_malformed_question_is_skipped(edit: Callable[[dict[str, Any]], None], reason: str) -> None:
    data = lme_data()
    edit(data[0])
    ds = parse_longmemeval(data)
    assert len(ds.questions) == 5
    assert ds.skipped[0].question_id == "q_ssu_01" and reason in ds.skipped[0].reason


def test_repeated_question_id_is_skipped() -> None:
    data = lme_data()
    ds = parse_longmemeval([*data, data[0]])
    assert len(ds.questions) == 6 and ds.skipped[0].reason == "repeated question_id"


def test_a_file_that_is_not_the_format_raises_one_typed_error(tmp_path: Path) -> None:
    cases = {
        "not-json.json": b"this is not json",
        "object.json": b'{"question_id": "x"}',
        "empty.json": b"[]",
        "garbage.json": b'[1, "two", {"question_id": "q1"}]',
        "broken.json.gz": b"\x1f\x8b\x08\x00broken",
    }
    for name, raw in cases.items():
        path = tmp_path / name
        path.write_bytes(raw)
        with pytest.raises(DatasetFormatError) as info:
            load_longmemeval(path)
        message = str(info.value)
        assert "\n" not in message and str(path) in message, name
    with pytest.raises(DatasetFormatError, match=r"\(item 0: not a JSON object\)"):
        load_longmemeval(tmp_path / "garbage.json")
    with pytest.raises(UserInputError, match="does not exist"):
        load_longmemeval(tmp_path / "missing.json")


def test_dataset_format_error_is_the_evaluations_and_a_caller_mistake() -> None:
    """A benchmark's error lives with the harnesses, not in the library's tree; as a
    UserInputError the CLI still reports it in one line with exit status 2."""
    assert issubclass(DatasetFormatError, UserInputError)
    assert DatasetFormatError.__module__ == "hymem.evaluation.errors"
    assert not hasattr(hymem.core.errors, "DatasetFormatError")
