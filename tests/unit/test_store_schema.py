"""Record <-> Arrow conversions, the shared analyzer and the time encoding (pure, in memory)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from hymem.core.errors import UserInputError
from hymem.core.time import micros
from hymem.core.types import SegmentRecord, SummaryRecord, TurnRecord
from hymem.indexes.lance import schema as S
from hymem.indexes.lexical.analysis import build_analyzer, content_terms, terms

T = datetime(2023, 5, 8, 13, 56)


def _summary(**kw: object) -> SummaryRecord:
    base = dict(
        id="s1",
        user_id="u",
        segment_id="g1",
        text="hello",
        vector=[1.0, 0.0, 0.0, 0.0],
        time_start=T,
        created_at=T,
        updated_at=T,
    )
    return SummaryRecord(**{**base, **kw})  # type: ignore[arg-type]


def test_summary_round_trip() -> None:
    rec = _summary(topic="x", reason="why")
    table = S.summaries_to_arrow([rec], 4)
    assert table.schema == S.summaries_schema(4)
    back = S.rows_to_records(SummaryRecord, table.to_pylist())[0]
    assert back.model_dump() == rec.model_dump()


def test_segment_and_turn_round_trip() -> None:
    seg = SegmentRecord(
        id="g",
        user_id="u",
        session_ids=["s"],
        turn_ids=["a", "b"],
        text="raw",
        vector=[0.5, 0.5],
        created_at=T,
    )
    assert S.rows_to_records(SegmentRecord, S.segments_to_arrow([seg], 2).to_pylist())[0] == seg
    turn = TurnRecord(
        id="t", user_id="u", session_id="s", seq=3, speaker="A", text="hi", created_at=T
    )
    assert S.rows_to_records(TurnRecord, S.turns_to_arrow([turn]).to_pylist())[0] == turn


@pytest.mark.parametrize("vector", [None, [1.0, 2.0], [float("nan")] * 4])
def test_bad_vectors_rejected(vector: list[float] | None) -> None:
    with pytest.raises(UserInputError):
        S.summaries_to_arrow([_summary(vector=vector)], 4)


def test_trace_keeps_extra_keys_in_payload() -> None:
    trace = {
        "trace_id": "t1",
        "user_id": "u",
        "created_at": T,
        "escalated": True,
        "iterations": 2,
        "retrieved": {"summary": ["a"]},
    }
    row = S.trace_to_arrow(trace).to_pylist()[0]
    assert row["escalated"] is True and row["iterations"] == 2
    back = S.trace_from_row(row)
    assert back["retrieved"] == {"summary": ["a"]} and back["created_at"] == T
    with pytest.raises(UserInputError):
        S.trace_to_arrow({"user_id": "u"})


def test_analyzer_stems_lowercases_and_drops_noise() -> None:
    an = build_analyzer()
    assert an.analyze("Support GROUPS meeting") == ["support", "group", "meet"]
    assert an.analyze("😀 🎉") == []
    assert an.analyze("the and of") == []
    assert an.analyze("x' OR '1'='1 AND ( ) - `") == ["x", "1", "1"]


def test_terms_are_the_analyzer_tokens_in_every_thread() -> None:
    text = "Caroline's support GROUPS were meeting on 7 May"
    assert terms(text) == build_analyzer().analyze(text)
    assert terms("the and of") == []
    terms(text).append("mutated")  # callers get a fresh list; the cache stays intact
    assert terms(text) == build_analyzer().analyze(text)
    seen: list[list[str]] = []
    texts = [f"{text} {i} visits" for i in range(8)]
    threads = [threading.Thread(target=lambda t=t: seen.append(terms(t))) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == sorted(build_analyzer().analyze(t) for t in texts)


def test_content_terms_drop_function_words_only() -> None:
    text = "She said she would not visit Tokyo in May"
    assert terms(text)[:3] == ["she", "said", "she"]  # the index keeps pronouns
    assert content_terms(text) == ["said", "visit", "tokyo", "may"]


def test_micros_is_exact_and_utc() -> None:
    assert micros(datetime(1970, 1, 1, 0, 0, 1, 5)) == 1_000_005
    assert micros(datetime(1969, 12, 31, 23, 59, 59)) == -1_000_000
    tokyo = timezone(timedelta(hours=9))
    assert micros(datetime(1970, 1, 1, 9, tzinfo=tokyo)) == 0
