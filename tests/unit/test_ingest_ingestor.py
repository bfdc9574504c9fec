"""The write path's orchestration over the real in-memory store and scripted roles."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.core.errors import InvalidMessageError, LLMUnavailable, StoreError, UserInputError
from hymem.core.types import SegmentRecord, TurnStatus
from hymem.write.ingestor import Ingestor
from hymem.write.request import add_request

from tests.fixtures_ingest import WriteFakes
from tests.fixtures_store import all_summaries, stored_segments
from tests.log_events import capture_events

T0 = datetime(2023, 5, 8, 13, 56)


def msgs(n: int, start: int = 0, prefix: str = "m") -> list[dict]:
    return [
        {
            "speaker": "Ann" if i % 2 else "Bob",
            "text": f"talking about topic {i}",
            "id": f"{prefix}{i}",
        }
        for i in range(start, start + n)
    ]


def stored(fakes: WriteFakes, user: str = "u") -> list[str]:
    return [t.id for t in fakes.store.get_turns(user, status=TurnStatus.STORED)]


def make(**cfg) -> tuple[WriteFakes, Ingestor]:
    base = {
        "segment_tau": -1.0,
        "segment_max_turns": 4,
        "buffer_tokens": 60,
        "segment_overlap_turns": 0,
    }
    base.update(cfg)
    fakes = WriteFakes(**base)
    return fakes, fakes.ingestor()


def test_turns_are_pending_before_any_model_runs() -> None:
    fakes, ing = make(buffer_tokens=10_000)
    res = ing.add(add_request(msgs(3), user_id="u", session_id="s1", timestamp=T0))
    assert res.turn_ids == ["m0", "m1", "m2"] and res.new_turn_ids == res.turn_ids
    assert fakes.roles.summarised() == [] and res.pending == 3
    assert [t.id for t in ing.pending(user_id="u")] == ["m0", "m1", "m2"]
    assert all(t.timestamp == T0 and t.session_id == "s1" for t in ing.pending(user_id="u"))


def test_full_buffer_is_summarised_in_one_call_and_open_segment_waits() -> None:
    fakes, ing = make()
    res = ing.add(add_request(msgs(16), user_id="u", session_id="s1", timestamp=T0))
    assert len(fakes.roles.summarised()) == 1
    assert res.segments_written and res.summaries_written
    assert res.pending == len(ing.pending(user_id="u")) > 0
    assert stored(fakes) == [f"m{i}" for i in range(16 - res.pending)]
    # every turn is covered by exactly one segment core; summaries link back
    for summ in fakes.store.get_summaries("u", ids=res.summaries_written):
        assert summ.segment_id in res.segments_written
    assert res.usage.roles["summarise"].calls == 1 and res.backend == "scripted"


def test_segment_lines_carry_time_and_speaker() -> None:
    fakes, ing = make()
    ing.add(add_request(msgs(2), user_id="u", session_id="s1", timestamp=T0))
    ing.flush(user_id="u")
    seg = stored_segments(fakes.store, "u")[0]
    assert seg.text.splitlines()[0] == "[2023-05-08 13:56] Bob: talking about topic 0"
    assert seg.time_start == T0 and seg.token_count > 0 and seg.compressed_text is None
    assert fakes.roles.summarised()[0][0].session_time == T0


def test_new_session_flushes_the_previous_sessions_buffer() -> None:
    fakes, ing = make(buffer_tokens=10_000)
    ing.add(add_request(msgs(3), user_id="u", session_id="s1", timestamp=T0))
    assert fakes.roles.summarised() == []
    res = ing.add(add_request(msgs(1, start=3), user_id="u", session_id="s2", timestamp=T0))
    assert len(fakes.roles.summarised()) == 1
    assert stored(fakes) == ["m0", "m1", "m2"] and res.pending == 1


def test_flush_forces_everything_in_buffer_sized_calls() -> None:
    fakes, ing = make()
    ing.add(add_request(msgs(5), user_id="u", session_id="s1", timestamp=T0))
    res = ing.flush(user_id="u")
    assert res.pending == 0 and ing.pending(user_id="u") == []
    assert len(stored(fakes)) == 5
    assert ing.flush(user_id="u").segments_written == []  # nothing left to do


def test_summariser_failure_keeps_turns_pending_then_retries() -> None:
    fakes, ing = make(summarise_fallback=False)  # else extractive summaries stand in
    ing.add(add_request(msgs(5), user_id="u", session_id="s1", timestamp=T0))
    fakes.roles.queue("summarise", LLMUnavailable("scripted outage", role="summarise"))
    with capture_events() as events:
        res = ing.flush(user_id="u")
    failed = [e for e in events if e["event"] == "ingest.summarise_failed"]
    assert failed and failed[0]["turns"] == 5 and "scripted outage" in failed[0]["error"]
    assert res.error and "scripted outage" in res.error
    assert res.segments_written == [] and res.pending == 5
    assert fakes.store.counts("u")["segments"] == 0 and len(ing.pending(user_id="u")) == 5
    first_ids = [s.segment_id for s in fakes.roles.summarised()[0]]
    res = ing.flush(user_id="u")
    assert res.error is None and res.pending == 0
    assert [
        s.segment_id for s in fakes.roles.summarised()[1]
    ] == first_ids  # same buffer re-derived


def test_failure_in_a_later_buffer_keeps_earlier_commits() -> None:
    fakes, ing = make(buffer_tokens=20, summarise_fallback=False)
    ing.add(add_request(msgs(10), user_id="u", session_id="s1", timestamp=T0))
    done = len(stored(fakes))
    fakes.roles.queue("summarise", LLMUnavailable("scripted outage", role="summarise"))
    ing.add(add_request(msgs(10, start=10), user_id="u", session_id="s1", timestamp=T0))
    assert len(stored(fakes)) == done  # the failing call stops before committing anything
    assert ing.flush(user_id="u").pending == 0 and len(stored(fakes)) == 20


def test_store_failure_propagates_and_loses_nothing() -> None:
    fakes, ing = make()
    ing.add(add_request(msgs(3), user_id="u", session_id="s1", timestamp=T0))
    fakes.store.fail["commit_segments"] = StoreError("disk full")
    with pytest.raises(StoreError):
        ing.flush(user_id="u")
    assert len(ing.pending(user_id="u")) == 3
    del fakes.store.fail["commit_segments"]
    assert ing.flush(user_id="u").pending == 0


def test_re_adding_ids_is_idempotent() -> None:
    fakes, ing = make()
    ing.add(add_request(msgs(3), user_id="u", session_id="s1", timestamp=T0))
    ing.flush(user_id="u")
    segs, sums = stored_segments(fakes.store, "u"), all_summaries(fakes.store)
    res = ing.add(add_request(msgs(3), user_id="u", session_id="s1", timestamp=T0))
    assert res.turn_ids == ["m0", "m1", "m2"] and res.new_turn_ids == []
    ing.flush(user_id="u")
    assert stored_segments(fakes.store, "u") == segs and all_summaries(fakes.store) == sums
    assert fakes.store.counts()["turns"] == 3


def test_default_ids_are_deterministic_and_distinct() -> None:
    runs = []
    for _ in range(2):
        fakes, ing = make()
        res = ing.add(
            add_request(
                [{"speaker": "a", "text": "same"}, {"speaker": "a", "text": "same"}],
                user_id="u",
                session_id="s1",
                timestamp=T0,
            )
        )
        ing.flush(user_id="u")
        segs = sorted(s.id for s in stored_segments(fakes.store, "u"))
        runs.append((res.turn_ids, segs, sorted(all_summaries(fakes.store))))
    assert runs[0] == runs[1]
    assert len(set(runs[0][0])) == 2


def test_invalid_message_writes_nothing_from_the_call() -> None:
    fakes, ing = make()
    bad = [*msgs(3), {"speaker": "x", "text": "  "}]
    with pytest.raises(InvalidMessageError) as err:
        ing.add(add_request(bad, user_id="u", session_id="s1", timestamp=T0))
    assert err.value.index == 3
    assert fakes.store.append_calls == [] and fakes.store.counts()["turns"] == 0
    for kwargs in ({"session_id": ""}, {"session_id": "s", "timestamp": "garbage"}):
        with pytest.raises(UserInputError):
            ing.add(add_request(msgs(1), user_id="u", **kwargs))
    assert fakes.store.counts()["turns"] == 0


def test_timestampless_turns_take_the_call_time_or_acceptance_time() -> None:
    _, ing = make(buffer_tokens=10_000)
    ing.add(
        add_request(
            [
                {"speaker": "a", "text": "x", "timestamp": "2020-01-01"},
                {"speaker": "a", "text": "y"},
            ],
            user_id="u",
            session_id="s",
            timestamp="1:56 pm on 8 May, 2023",
        )
    )
    times = [t.timestamp for t in ing.pending(user_id="u")]
    assert times == [datetime(2020, 1, 1), T0]
    before = datetime.utcnow()
    ing.add(add_request([{"speaker": "a", "text": "z"}], user_id="u", session_id="s"))
    assert ing.pending(user_id="u")[-1].timestamp >= before.replace(microsecond=0)


def test_overlap_tail_is_context_not_ownership() -> None:
    fakes, ing = make(segment_overlap_turns=1, segment_max_turns=2, buffer_tokens=12)
    ing.add(add_request(msgs(3), user_id="u", session_id="s1", timestamp=T0))
    first = fakes.roles.summarised()[0][0]
    assert len(first.lines) == 3  # two core turns + one turn of overlap
    assert stored(fakes) == ["m0", "m1"]  # the tail turn stays pending for its own segment
    ing.flush(user_id="u")
    assert stored(fakes) == ["m0", "m1", "m2"]
    m0, m2 = fakes.store.get_turns("u", ids=["m0", "m2"])
    assert m2.segment_id != m0.segment_id


def test_users_are_isolated() -> None:
    _, ing = make(buffer_tokens=10_000)
    ing.add(add_request(msgs(2), user_id="alice", session_id="s", timestamp=T0))
    ing.add(add_request(msgs(2), user_id="bob", session_id="s", timestamp=T0))
    ing.flush(user_id="alice")
    assert len(ing.pending(user_id="bob")) == 2 and ing.pending(user_id="alice") == []


def test_ten_thousand_turns_one_batched_write_then_buffer_sized_calls() -> None:
    fakes, ing = make(buffer_tokens=512, segment_max_turns=12)
    many = [{"speaker": "a", "text": f"turn number {i}"} for i in range(10_000)]
    res = ing.add(add_request(many, user_id="u", session_id="s", timestamp=T0))
    assert fakes.store.append_calls == [10_000]
    res = ing.flush(user_id="u")
    assert res.pending == 0 and len(stored(fakes)) == 10_000
    calls = len(fakes.roles.summarised())
    tokens = [
        sum(len(ln.split()) for s in call for ln in s.lines) for call in fakes.roles.summarised()
    ]
    assert 10_000 * 6 / 512 / 2 < calls < 10_000 * 6 / 100  # buffer-sized, not per turn
    assert max(tokens) < 3 * min(tokens[:-1])


def test_same_turn_ids_of_two_users_never_share_cached_work() -> None:
    fakes, ing = make(buffer_tokens=10_000)
    seen: list[str] = []
    embed = fakes.embedder.embed
    fakes.embedder.embed = lambda texts: (seen.extend(texts), embed(texts))[1]  # type: ignore[method-assign]
    ing.add(add_request(msgs(2), user_id="alice", session_id="s", timestamp=T0))
    other = [{"speaker": "Cy", "text": f"bob's own words {i}", "id": f"m{i}"} for i in range(2)]
    ing.add(add_request(other, user_id="bob", session_id="s", timestamp=T0))
    ing.flush(user_id="bob")
    assert "bob's own words 0" in seen and "bob's own words 1" in seen
    bob_lines = [ln for call in fakes.roles.summarised() for s in call for ln in s.lines]
    assert all("Cy: bob's own words" in ln for ln in bob_lines)


def test_a_full_cache_costs_recomputation_never_correctness() -> None:
    fakes, ing = make(buffer_tokens=10_000, ingest_cache_items=3)
    embedded: list[str] = []
    embed = fakes.embedder.embed
    fakes.embedder.embed = lambda texts: (embedded.extend(texts), embed(texts))[1]  # type: ignore[method-assign]
    ing.add(add_request(msgs(2), user_id="u", session_id="s", timestamp=T0))
    ing.add(
        add_request(msgs(2, start=2), user_id="u", session_id="s", timestamp=T0)
    )  # cache overflows
    ing.add(add_request(msgs(1, start=4), user_id="u", session_id="s", timestamp=T0))
    assert ing.flush(user_id="u").pending == 0 and len(stored(fakes)) == 5
    turn_texts = [t for t in embedded if t.startswith("talking about")]
    assert len(set(turn_texts)) == 5  # every turn got its vector despite the dropped caches


def test_one_session_below_th_embeds_nothing_until_it_can_flush() -> None:
    fakes, ing = make(buffer_tokens=10_000)
    embedded: list[str] = []
    embed = fakes.embedder.embed
    fakes.embedder.embed = lambda texts: (embedded.extend(texts), embed(texts))[1]  # type: ignore[method-assign]
    for i in range(4):
        res = ing.add(add_request(msgs(1, start=i), user_id="u", session_id="s", timestamp=T0))
        assert res.pending == i + 1 and not res.segments_written
    assert embedded == []  # no buffer could flush: no turn was embedded yet
    ing.flush(user_id="u")
    turn_texts = [t for t in embedded if t.startswith("talking about")]
    assert sorted(turn_texts) == sorted(set(turn_texts)) and len(turn_texts) == 4


def test_segments_are_pooled_from_turn_vectors_never_embedded_again() -> None:
    fakes, ing = make(buffer_tokens=10_000)
    embedded: list[str] = []
    embed = fakes.embedder.embed
    fakes.embedder.embed = lambda texts: (embedded.extend(texts), embed(texts))[1]  # type: ignore[method-assign]
    committed: list[SegmentRecord] = []
    commit = fakes.store.commit_segments
    fakes.store.commit_segments = lambda u, segs, *a, **k: (  # type: ignore[method-assign]
        committed.extend(segs),
        commit(u, segs, *a, **k),
    )[1]
    ing.add(add_request(msgs(3), user_id="u", session_id="s", timestamp=T0))
    assert ing.flush(user_id="u").segments_written
    assert committed and not any(seg.text in embedded for seg in committed)
    for seg in committed:
        assert seg.vector is not None and abs(sum(x * x for x in seg.vector) - 1.0) < 1e-4


def test_buffers_of_one_flush_are_committed_together() -> None:
    fakes, ing = make(buffer_tokens=8)  # every segment fills a buffer of its own
    commits: list[int] = []
    commit = fakes.store.commit_segments
    fakes.store.commit_segments = lambda u, segs, *a, **k: (  # type: ignore[method-assign]
        commits.append(len(segs)),
        commit(u, segs, *a, **k),
    )[1]
    ing.add(add_request(msgs(8), user_id="u", session_id="s", timestamp=T0))
    res = ing.flush(user_id="u")
    assert len(fakes.roles.summarised()) > 1  # one summariser call per buffer, as always
    assert len(commits) <= 2  # the add's buffers in one commit, the flush's in another
    assert sum(commits) == len(stored_segments(fakes.store, "u"))
    assert res.pending == 0 and len(stored(fakes)) == 8


def embed_batches(fakes: WriteFakes) -> list[int]:
    """The sizes of the turn batches the embedder is given from now on."""
    sizes: list[int] = []
    embed = fakes.embedder.embed

    def counting(texts: list[str]) -> object:
        turns = [t for t in texts if t.startswith("talking about")]
        if turns:
            sizes.append(len(turns))
        return embed(texts)

    fakes.embedder.embed = counting  # type: ignore[method-assign]  # a counting spy
    return sizes


@pytest.mark.parametrize("every", [1, 4])
def test_one_turn_adds_into_a_full_buffer_embed_in_batches(every: int) -> None:
    """Once the buffer is full, each add that stored nothing used to embed its one new turn
    alone; now the next plan waits for `plan_every_turns` turns. Nothing is lost either way."""
    fakes, ing = make(buffer_tokens=20, segment_max_turns=6, plan_every_turns=every)
    sizes = embed_batches(fakes)
    for i in range(30):
        res = ing.add(add_request(msgs(1, start=i), user_id="u", session_id="s", timestamp=T0))
        assert res.pending == len(ing.pending(user_id="u"))
    if every == 1:
        assert sizes.count(1) > 10  # one turn at a time
    else:
        assert max(sizes) >= every and sizes.count(1) <= 2
        assert len(stored(fakes)) >= 30 - 6 - every  # stored at most every - 1 turns later
    assert ing.flush(user_id="u").pending == 0
    assert stored(fakes) == [f"m{i}" for i in range(30)]


def test_a_new_session_stores_the_last_one_at_once_despite_waiting() -> None:
    fakes, ing = make(buffer_tokens=20, segment_max_turns=50, plan_every_turns=10)
    for i in range(6):  # a full buffer whose one segment stays open
        ing.add(add_request(msgs(1, start=i), user_id="u", session_id="s1", timestamp=T0))
    assert stored(fakes) == []
    res = ing.add(add_request(msgs(1, start=6), user_id="u", session_id="s2", timestamp=T0))
    assert stored(fakes) == [f"m{i}" for i in range(6)] and res.pending == 1
