"""Deterministic ids and record construction for the write path (pure: no I/O).

Ids are content hashes so that a re-run after a crash or an LLM failure reproduces the same
segments and summaries, and `Commits.commit_segments` replaces instead of duplicating:
    turn     "t-"   + hash(user_id, session_id, seq, text)   (when the caller gave no id)
             "t-"   + hash(user_id, "request", request_id, position)   (with an add()'s request id)
    segment  "seg-" + hash(user_id, turn ids)
    summary  "sum-" + hash(segment_id, index)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime

from hymem.core.logging import get_logger
from hymem.core.metadata import Metadata, canonical
from hymem.core.time import format_line_time, utcnow
from hymem.core.types import Attribution, SegmentRecord, SummaryRecord, TurnRecord, TurnStatus
from hymem.indexes.keys import summary_context
from hymem.llm.roles import FactItem, SegmentSummary
from hymem.llm.tokens import count_tokens
from hymem.write.messages import NormalisedMessage
from hymem.write.summary_vectors import SummarySource

log = get_logger("hymem.write.ingestor")


def _digest(*parts: object) -> str:
    payload = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def default_turn_id(user_id: str, session_id: str, seq: int, text: str) -> str:
    return "t-" + _digest(user_id, session_id, seq, text)


def request_turn_id(user_id: str, request_id: str, position: int) -> str:
    """The id of the message at `position` of the add() named `request_id`: the same request
    sent again makes the same ids, whatever was added in between, so it is stored once."""
    return "t-" + _digest(user_id, "request", request_id, position)


def call_turn_ids(
    user_id: str, request_id: str, accepted: Sequence[NormalisedMessage]
) -> list[str]:
    """The turn id of each message of an add() with a request id: the message's own id if it
    has one (exactly-once by itself), else the request's for its position."""
    return [m.id or request_turn_id(user_id, request_id, i) for i, m in enumerate(accepted)]


def pending_records(
    user_id: str,
    session_id: str,
    seq: int,
    accepted: Sequence[NormalisedMessage],
    now: datetime,
    metadata: Metadata,
    request_id: str | None = None,
) -> list[TurnRecord]:
    """One add() call's messages as pending turns, numbered from `seq`; a message without
    its own id gets the request's id for its position (`request_turn_id`) when the call has a
    request id, else the content id (`default_turn_id`), so a re-run stores nothing twice."""
    ids = call_turn_ids(user_id, request_id, accepted) if request_id else []
    return [
        TurnRecord(
            id=ids[i] if ids else m.id or default_turn_id(user_id, session_id, seq + i, m.text),
            user_id=user_id,
            session_id=session_id,
            seq=seq + i,
            speaker=m.speaker,
            text=m.text,
            timestamp=m.timestamp,
            status=TurnStatus.PENDING,
            created_at=now,
            metadata=dict(metadata),
        )
        for i, m in enumerate(accepted)
    ]


def segment_id(user_id: str, turn_ids: Sequence[str]) -> str:
    return "seg-" + _digest(user_id, list(turn_ids))


def summary_id(seg_id: str, index: int) -> str:
    return "sum-" + _digest(seg_id, index)


def segment_line(turn: TurnRecord, text: str | None = None) -> str:
    """`[YYYY-MM-DD HH:MM] Speaker: text`; the time is omitted only if the turn has none."""
    body = f"{turn.speaker}: {turn.text if text is None else text}"
    if turn.timestamp is None:
        return body
    return f"[{format_line_time(turn.timestamp)}] {body}"


def segment_scope(turn: TurnRecord) -> str:
    """What a segment never spans: a session, and one metadata dict. Segmentation treats a
    change of either as a boundary, so every turn of a segment (its overlap tail included)
    shares its metadata, and the segment and its summaries inherit that one dict."""
    if not turn.metadata:
        return turn.session_id
    return json.dumps([turn.session_id, canonical(turn.metadata)], ensure_ascii=False)


def build_segment(
    user_id: str, turns: Sequence[TurnRecord], *, summariser_lines: Sequence[str] | None = None
) -> SegmentRecord:
    """A Level-2 segment over `turns` (core plus overlap tail), raw text always kept."""
    text = "\n".join(segment_line(t) for t in turns)
    times = [t.timestamp for t in turns if t.timestamp is not None]
    return SegmentRecord(
        id=segment_id(user_id, [t.id for t in turns]),
        user_id=user_id,
        session_ids=list(dict.fromkeys(t.session_id for t in turns)),
        turn_ids=[t.id for t in turns],
        text=text,
        time_start=min(times) if times else None,
        time_end=max(times) if times else None,
        token_count=count_tokens(text),
        compressed_text="\n".join(summariser_lines) if summariser_lines is not None else None,
        created_at=utcnow(),
        metadata=dict(turns[0].metadata) if turns else {},
    )


def build_summaries(
    user_id: str, segments: Sequence[SegmentRecord], outputs: Sequence[SegmentSummary]
) -> list[SummaryRecord]:
    """Level-1 records from the summariser's reply, linked to their segments and source turns.

    Facts for ids the buffer did not contain are dropped (and logged); blank facts are skipped,
    and so is a fact repeated anywhere earlier in the buffer (overlapping segments share turns,
    so the same sentence often comes back twice); a segment with no facts is stored as Level-2
    only. A fact's `turns` (line numbers, checked by `check_summarise`) become its
    `source_turn_ids`; a fact without them stands for its whole segment, flagged
    `Attribution.SEGMENT` and logged."""
    by_id = {s.id: s for s in segments}
    facts: dict[str, list[tuple[str, list[str], Attribution]]] = {s.id: [] for s in segments}
    seen: set[str] = set()
    for out in outputs:
        seg = by_id.get(out.segment_id)
        if seg is None:
            log.warning("ingest.unknown_segment_in_reply", segment_id=out.segment_id)
            continue
        for fact in out.facts:
            clean = " ".join(fact.text.split())
            if clean and clean.casefold() not in seen:
                seen.add(clean.casefold())
                facts[seg.id].append((clean, *_attribute(seg, fact, fact.text in out.sources)))
    now = utcnow()
    records = []
    for seg in segments:
        lines = seg.text.split("\n")
        for index, (text, turn_ids, attribution) in enumerate(facts[seg.id]):
            records.append(
                SummaryRecord(
                    id=summary_id(seg.id, index),
                    user_id=user_id,
                    segment_id=seg.id,
                    text=text,
                    time_start=seg.time_start,
                    time_end=seg.time_end,
                    source_turn_ids=turn_ids,
                    attribution=attribution,
                    context=summary_context(lines, seg.turn_ids, turn_ids),
                    created_at=now,
                    updated_at=now,
                    metadata=dict(seg.metadata),
                )
            )
    unattributed = [r.segment_id for r in records if r.attribution is Attribution.SEGMENT]
    if unattributed:
        log.warning(
            "ingest.summaries_unattributed",
            user_id=user_id,
            summaries=len(unattributed),
            segment_ids=sorted(set(unattributed)),
        )
    return records


def _attribute(
    seg: SegmentRecord, fact: FactItem, extracted: bool
) -> tuple[list[str], Attribution]:
    """(source turn ids, how they were found) of one fact of `seg`; lines are numbered from 1
    in the segment's turn order."""
    lines = sorted({t for t in fact.turns if 1 <= t <= len(seg.turn_ids)})
    if not lines or len(lines) != len(set(fact.turns)):
        return list(seg.turn_ids), Attribution.SEGMENT
    kind = Attribution.SOURCE if extracted else Attribution.MODEL
    return [seg.turn_ids[t - 1] for t in lines], kind


def summary_sources(
    summaries: Sequence[SummaryRecord],
    outputs: Sequence[SegmentSummary],
    members: dict[str, list[TurnRecord]],
) -> dict[str, SummarySource]:
    """Summary id -> the turn sentence its fact was taken from, where the summariser said so
    (the extractive one does) and the line it named is one of the segment's turns."""
    by_fact: dict[tuple[str, str], SummarySource] = {}
    for out in outputs:
        turns = members.get(out.segment_id, [])
        for fact, src in out.sources.items():  # keyed by the fact's text
            if 0 <= src.line < len(turns):
                turn = turns[src.line]
                key = (out.segment_id, " ".join(fact.split()))
                by_fact.setdefault(key, SummarySource((turn.user_id, turn.id), turn.text, src.text))
    return {
        rec.id: by_fact[(rec.segment_id, rec.text)]
        for rec in summaries
        if (rec.segment_id, rec.text) in by_fact
    }
