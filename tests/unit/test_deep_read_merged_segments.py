"""The deep read of a summary that merged a repeat said in another segment: Reader.ask over
scripted roles and the real in-memory store. The segments holding its turns its own segment
lacks are read after every chosen summary's own segment, once each, and only while their text
fits the ask's tokens left; a summary whose turns all lie in its own segment reads nothing more."""

from __future__ import annotations

from typing import Any

from hymem.core.types import Hit, Level, TurnRecord, TurnStatus
from hymem.llm.tokens import count_tokens

from tests.doubles import USAGE, ScriptedRoles
from tests.fixtures_reader import T0, ReaderFakes, make_fakes, segment_record, summary_hit


def summary_on(i: int, segment: int, turns: list[str]) -> Hit:
    """Summary `sum{i}` of segment `seg{segment}` resting on `turns`."""
    return summary_hit(i, segment=segment).model_copy(update={"turn_ids": turns})


def fakes_with_turns(hits: list[Hit], **config: Any) -> ReaderFakes:
    """Six segments seg0..seg5 whose turns t{i}a, t{i}b are stored and link their segment; a
    deep ask of one round choosing every hit in `hits`."""
    fakes = make_fakes(6, roles=ScriptedRoles(), **config)
    fakes.searcher.hits = hits
    turns = [
        TurnRecord(
            id=f"t{i}{part}",
            user_id="alice",
            session_id="s1",
            seq=2 * i + n,
            speaker="A",
            text=f"raw {i}",
            timestamp=T0,
            status=TurnStatus.PENDING,
            created_at=T0,
        )
        for i in range(6)
        for n, part in enumerate("ab")
    ]
    fakes.store.append_turns(turns)
    segments = [segment_record(i) for i in range(6)]
    fakes.store.commit_segments("alice", segments, [], [t.id for t in turns])
    return fakes


def deep_ask(fakes: ReaderFakes) -> Any:
    return fakes.reader().ask(fakes.params("q", depth="deep", d=10, max_iterations=0))


def passages(fakes: ReaderFakes) -> list[str]:
    _, read, _ = fakes.roles.called("deep_answer")[0]
    return [p.id for p in read]


MERGED = [
    summary_on(0, 0, ["t0a", "t4a"]),  # merged a repeat said in seg4
    summary_on(1, 1, ["t1a", "t5b", "t4b"]),  # merged repeats said in seg5 and seg4
    summary_on(2, 2, ["t2a"]),
]


def test_segments_a_merged_repeat_lies_in_are_read_after_every_own_segment_once() -> None:
    fakes = fakes_with_turns(MERGED)
    ans = deep_ask(fakes)
    assert fakes.store.segment_requests == [["seg0", "seg1", "seg2"], ["seg4", "seg5"]]
    assert passages(fakes) == ["seg0", "seg1", "seg2", "seg4", "seg5"]  # time order
    assert [h.id for h in ans.evidence if h.level == Level.SEGMENT] == passages(fakes)
    assert not ans.budget_exhausted


def test_turns_all_in_their_own_segment_read_nothing_more() -> None:
    fakes = fakes_with_turns([summary_on(0, 0, ["t0a", "t0b"]), summary_on(1, 1, ["t1b"])])
    deep_ask(fakes)
    assert fakes.store.segment_requests == [["seg0", "seg1"]]
    assert passages(fakes) == ["seg0", "seg1"]


def test_a_turn_another_chosen_summarys_segment_holds_reads_nothing_more() -> None:
    fakes = fakes_with_turns([summary_on(0, 0, ["t0a", "t1a"]), summary_on(1, 1, ["t1b"])])
    deep_ask(fakes)
    assert fakes.store.segment_requests == [["seg0", "seg1"]]


def test_further_segments_fit_the_tokens_left_and_never_crowd_out_own_segments() -> None:
    own = sum(count_tokens(segment_record(i).text) for i in range(3))
    spent = USAGE.total_tokens  # the one selection call before the deep read
    budget = spent + own + count_tokens(segment_record(4).text)  # room for seg4 only
    fakes = fakes_with_turns(MERGED, max_tokens_per_ask=budget)
    reader = fakes.reader()
    ans = reader.ask(fakes.params("q", depth="deep", d=10, max_iterations=0))
    reader.flush_traces()
    assert passages(fakes) == ["seg0", "seg1", "seg2", "seg4"]
    assert ans.budget_exhausted
    (stop,) = fakes.store.read_traces()[0]["budget_stops"]
    assert "1 further segments left unread" in stop


def test_no_tokens_left_still_reads_every_own_segment() -> None:
    fakes = fakes_with_turns(MERGED, max_tokens_per_ask=USAGE.total_tokens + 1)
    ans = deep_ask(fakes)
    assert passages(fakes) == ["seg0", "seg1", "seg2"]
    assert ans.budget_exhausted
