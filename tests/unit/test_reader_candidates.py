"""The deep path's candidate pool: summaries and segments fused, orphans reachable."""

from __future__ import annotations

from hymem.core.types import Hit, Level
from hymem.read.candidates import distinct_sources, fuse_candidates, snippet


def summary(i: int, seg: int) -> Hit:
    return Hit(
        level=Level.SUMMARY, id=f"sum{i}", user_id="u", text=f"fact {i}", segment_id=f"seg{seg}"
    )


def segment(i: int, text: str = "") -> Hit:
    return Hit(
        level=Level.SEGMENT,
        id=f"seg{i}",
        user_id="u",
        text=text or f"A: line of segment {i}",
        segment_id=f"seg{i}",
        turn_ids=[f"t{i}"],
    )


def test_a_segment_without_summary_joins_the_pool_as_a_snippet() -> None:
    long_text = "\n".join(
        ["A: hello there", "B: I went kayaking on the lake", "A: nice", "B: the lake was cold"]
    )
    pool = fuse_candidates(
        [summary(0, 0), summary(1, 1)], [segment(7, long_text)], 10, "where did B go kayaking"
    )
    assert [h.id for h in pool] == ["sum0", "seg7", "sum1"]
    orphan = pool[1]
    assert orphan.level == Level.SEGMENT and orphan.segment_id == "seg7"
    assert orphan.text == "B: I went kayaking on the lake … B: the lake was cold"
    assert orphan.turn_ids == ["t7"]


def test_a_segment_already_reached_through_a_higher_summary_is_dropped() -> None:
    pool = fuse_candidates([summary(0, 3), summary(1, 4)], [segment(3), segment(9)], 10, "q")
    assert [h.id for h in pool] == ["sum0", "sum1", "seg9"]


def test_the_pool_is_cut_at_n_and_scored_by_the_fusion() -> None:
    sums = [summary(i, i) for i in range(6)]
    segs = [segment(10 + i) for i in range(6)]
    pool = fuse_candidates(sums, segs, 4, "q")
    assert len(pool) == 4
    assert [h.fused_score for h in pool] == sorted((h.fused_score for h in pool), reverse=True)


def test_snippet_keeps_short_texts_whole_and_cuts_long_ones() -> None:
    assert snippet("A: one\nB: two", "anything") == "A: one … B: two"
    long_line = "B: " + "kayak " * 100
    cut = snippet(f"A: hi\nA: ok\n{long_line}", "kayak", lines=1, chars=50)
    assert len(cut) == 50 and cut.endswith("…") and cut.startswith("B: kayak")


def test_the_light_path_skips_summaries_of_turns_already_read() -> None:
    hits = [
        summary(0, 0).model_copy(update={"turn_ids": ["t1"]}),
        summary(1, 0).model_copy(update={"turn_ids": ["t1"]}),  # same turn: skipped
        summary(2, 0).model_copy(update={"turn_ids": ["t1", "t2"]}),  # adds t2
        summary(3, 1),  # no turns known: kept
        summary(4, 1).model_copy(update={"turn_ids": ["t3"]}),
    ]
    assert [h.id for h in distinct_sources(hits, 3)] == ["sum0", "sum2", "sum3"]
    assert [h.id for h in distinct_sources(hits, 10)] == ["sum0", "sum2", "sum3", "sum4"]
