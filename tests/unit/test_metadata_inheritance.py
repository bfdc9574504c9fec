"""Metadata through the write path and sleep, without disk or models: turns carry the call's
metadata, the segmenter cuts where it changes so each segment's turns share one dict, segments
and summaries inherit it, a retried add must repeat it, and sleep never consolidates across
metadata (a merge keeps its target's)."""

from __future__ import annotations

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import UserInputError
from hymem.core.types import SummaryRecord, SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.sleep.consolidator import Consolidator
from hymem.sleep.journal import SleepJournal
from hymem.write.request import add_request

from tests.doubles import ScriptedRoles
from tests.fixtures_ingest import WriteFakes
from tests.fixtures_sleep import summary, summary_store
from tests.fixtures_store import all_summaries, stored_segments

ALPHA = {"agent_id": "alpha", "project": "garden", "year": 2023}
BETA = {"agent_id": "beta", "project": "garden", "year": 2023}


def _msgs(*texts: str) -> list[dict[str, str]]:
    return [{"speaker": "A" if i % 2 == 0 else "B", "text": t} for i, t in enumerate(texts)]


def test_segments_never_span_a_metadata_change_and_inherit_it() -> None:
    fakes = WriteFakes(segment_tau=-1.0, segment_overlap_turns=2)  # no topic cuts at all
    ing = fakes.ingestor()
    ing.add(add_request(_msgs("we planted tomatoes", "and basil too"), user_id="u", metadata=ALPHA))
    ing.add(
        add_request(
            _msgs("the roses need water", "and the hedge a trim"), user_id="u", metadata=BETA
        )
    )
    ing.add(add_request(_msgs("no metadata here"), user_id="u"))
    ing.flush(user_id="u")
    turns = fakes.store.get_turns("u")
    assert [t.metadata for t in turns] == [ALPHA, ALPHA, BETA, BETA, {}]
    segments = stored_segments(fakes.store, "u")
    by_turn = {t.id: t for t in turns}
    assert len({s.id for s in segments}) == 3  # one per metadata run, overlap tails included
    for seg in segments:
        assert all(by_turn[t].metadata == seg.metadata for t in seg.turn_ids)
    for rec in all_summaries(fakes.store, "u").values():
        seg = next(s for s in segments if s.id == rec.segment_id)
        assert rec.metadata == seg.metadata
    assert {s.metadata["agent_id"] for s in segments if s.metadata} == {"alpha", "beta"}


def test_a_retry_must_repeat_the_metadata_to_be_recognised() -> None:
    fakes = WriteFakes(retry_window_s=600)  # the equal-text guess, opted in
    ing = fakes.ingestor()
    first = ing.add(add_request(_msgs("hello there"), user_id="u", metadata={"k": 1}))
    again = ing.add(add_request(_msgs("hello there"), user_id="u", metadata={"k": 1}))
    other = ing.add(add_request(_msgs("hello there"), user_id="u", metadata={"k": True}))
    assert again.new_turn_ids == [] and again.turn_ids == first.turn_ids
    assert other.new_turn_ids and other.turn_ids != first.turn_ids


def test_a_request_id_sent_again_with_other_metadata_is_refused() -> None:
    ing = WriteFakes().ingestor()
    first = ing.add(
        add_request(_msgs("hello there"), user_id="u", metadata={"k": 1}, request_id="r")
    )
    again = ing.add(
        add_request(_msgs("hello there"), user_id="u", metadata={"k": 1}, request_id="r")
    )
    assert again.new_turn_ids == [] and again.turn_ids == first.turn_ids
    with pytest.raises(UserInputError, match="already used"):
        ing.add(
            add_request(_msgs("hello there"), user_id="u", metadata={"k": True}, request_id="r")
        )


def _twin(sid: str, day: int, meta: dict[str, object]) -> SummaryRecord:
    vec = [0.0] * 256
    vec[0], vec[1] = 1.0, 0.01 * day
    return summary(
        sid, f"User likes green tea {sid}", day=day, created=day, vector=vec, metadata=meta
    )


def test_sleep_consolidates_within_one_metadata_dict_only() -> None:
    records = [
        _twin("a1", 0, ALPHA),
        _twin("b1", 1, BETA),
        _twin("a2", 2, ALPHA),
        _twin("n", 3, {}),
    ]
    store = summary_store(records)

    def merge(target: object, newer: list[object]) -> dict[str, object]:
        first = newer[0]
        return {
            "action": "update",
            "text": f"{target.text} and {first.text}",  # type: ignore[attr-defined]
            "evidence_id": first.id,  # type: ignore[attr-defined]
        }

    roles = ScriptedRoles(update=merge)
    config = MemoryConfig.defaults(sleep_similarity_floor=0.5)
    cons = Consolidator(store, HashingEmbedder(), lambda: roles, config, journal=SleepJournal(None))
    cons.sleep(max_workers=1)
    assert roles.updates() == [("a1", ["a2"])]  # b1 and n are alone in their groups
    rows = all_summaries(store, "u1")
    assert rows["a1"].status == SummaryStatus.SUPERSEDED
    merged = rows[rows["a1"].superseded_by or ""]
    assert merged.metadata == ALPHA and merged.status == SummaryStatus.ACTIVE
    assert rows["b1"].status == rows["n"].status == SummaryStatus.ACTIVE
