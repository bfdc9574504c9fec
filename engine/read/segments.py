"""The deep path's raw reading: the Level-2 segments the chosen summaries rest on, this user's
only. A summary that merged a repeat said elsewhere rests on turns its own segment lacks, so the
segments holding those are read too, after every chosen summary's own and only while their text
fits the tokens left, so they never crowd out another summary's own segment."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from hymem.core.logging import get_logger
from hymem.core.types import Hit, Level, SegmentRecord
from hymem.llm.tokens import count_tokens
from hymem.read.ports import SegmentStore

log = get_logger(__name__)


def read_segments(
    store: SegmentStore, user_id: str, chosen: list[Hit], tokens_left: int | None
) -> tuple[list[Hit], int]:
    """The segments `chosen` rests on as time-ordered segment hits (each scored by the best
    summary resting on it), and how many further segments did not fit `tokens_left`
    (None: unlimited)."""
    score: dict[str, float] = {}
    for hit in chosen:
        score[hit.segment_id] = max(score.get(hit.segment_id, 0.0), hit.fused_score)
    own = own_segments(store, user_id, list(score))
    extra, left_out = segments_elsewhere(store, user_id, chosen, own, tokens_left)
    for hit, record in extra:
        score[record.id] = max(score.get(record.id, 0.0), hit.fused_score)
    unique = {r.id: r for r in [*own, *(r for _, r in extra)]}.values()
    return segment_hits(unique, score), left_out


def segment_hits(records: Iterable[SegmentRecord], score: dict[str, float]) -> list[Hit]:
    """`records` as segment hits ordered by time (undated last), ties in `score`'s order."""
    rank = {seg_id: i for i, seg_id in enumerate(score)}
    ordered = sorted(
        records, key=lambda r: (r.time_start is None, r.time_start or datetime.min, rank[r.id])
    )
    return [
        Hit(
            level=Level.SEGMENT,
            id=r.id,
            user_id=r.user_id,
            text=r.text,
            segment_id=r.id,
            turn_ids=list(r.turn_ids),
            time_start=r.time_start,
            time_end=r.time_end,
            metadata=dict(r.metadata),
            fused_score=score[r.id],
        )
        for r in ordered
    ]


def own_segments(store: SegmentStore, user_id: str, ids: list[str]) -> list[SegmentRecord]:
    """The segments `ids` names that are this user's; a stray row is dropped and logged."""
    records = store.get_segments(user_id, ids) if ids else []
    wanted = set(ids)
    own = [r for r in records if r.user_id == user_id and r.id in wanted]
    if len(own) != len(records):
        log.error("ask.foreign_segment_dropped", user_id=user_id, dropped=len(records) - len(own))
    return own


def segments_elsewhere(
    store: SegmentStore,
    user_id: str,
    chosen: list[Hit],
    own: list[SegmentRecord],
    tokens_left: int | None,
) -> tuple[list[tuple[Hit, SegmentRecord]], int]:
    """The segments holding chosen summaries' turns that no segment in `own` holds (a
    repeat merged from another segment), each with the best-ranked summary resting on it,
    in the summaries' rank order, and how many of them did not fit `tokens_left` after
    `own`'s text. Each turn's own segment link finds its segment; nothing more is read
    when every summary's turns lie in the segments already read."""
    held = {t for r in own for t in r.turn_ids}
    missing = {h.id: [t for t in h.turn_ids if t not in held] for h in chosen}
    wanted = list(dict.fromkeys(t for turns in missing.values() for t in turns))
    if not wanted:
        return [], 0
    link = {
        t.id: t.segment_id
        for t in store.get_turns(user_id, ids=wanted)
        if t.user_id == user_id and t.segment_id
    }
    read = {r.id for r in own} | {h.segment_id for h in chosen}
    first: dict[str, Hit] = {}  # segment id -> the best-ranked summary resting on it
    for hit in chosen:
        for turn in missing[hit.id]:
            seg_id = link.get(turn)
            if seg_id is not None and seg_id not in read:
                first.setdefault(seg_id, hit)
    if not first:
        return [], 0
    found = {r.id: r for r in own_segments(store, user_id, list(first))}
    room = None if tokens_left is None else tokens_left - sum(count_tokens(r.text) for r in own)
    kept: list[tuple[Hit, SegmentRecord]] = []
    left_out = 0
    for seg_id, hit in first.items():
        record = found.get(seg_id)
        if record is None:
            continue
        if room is not None:
            cost = count_tokens(record.text)
            if cost > room:
                left_out += 1
                continue
            room -= cost
        kept.append((hit, record))
    return kept, left_out
