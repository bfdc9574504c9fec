"""Per-role checks that make a schema-valid reply usable, and the per-role safe fallbacks.

A check either returns the (possibly trimmed) output, recording what it dropped in `notes`, or
raises InvalidReply with a message for the repair prompt. Fallbacks are deliberately
conservative: they make the caller do more work (escalate, keep more events, stop reflecting,
change nothing), never invent content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hymem.llm.roles import (
    ContextItem,
    DeepAnswerOutput,
    LightAnswerOutput,
    ReflectOutput,
    SegmentInput,
    SegmentSummary,
    SelectOutput,
    SummariseOutput,
    UpdateOutput,
)
from hymem.llm.structured import InvalidReply

UNABLE_TO_ANSWER = "Unable to answer: the model's reply could not be used."

# The prompts show a reply's shape with placeholders ("<sentence>", "<merged sentence or null>");
# a small model copies them as its content. One whole text in angle brackets is such a copy.
_PLACEHOLDER = re.compile(r"\s*<[^<>\n]{1,80}>\s*")


def is_placeholder(text: str) -> bool:
    """Whether `text` is a template placeholder copied from the prompt, not content."""
    return _PLACEHOLDER.fullmatch(text) is not None


def _has_words(text: str) -> bool:
    """A fact states something in words; a bare timestamp or number copied from a line's
    prefix ("2023-07-12 16:33") does not."""
    return any(ch.isalpha() for ch in text)


def _no_placeholder(field: str, text: str | None) -> None:
    if text is not None and is_placeholder(text):
        raise InvalidReply(
            f"{field} is {text.strip()!r}, the template's placeholder: write the actual {field}"
        )


def check_summarise(
    out: SummariseOutput, segments: Sequence[SegmentInput], notes: list[str]
) -> SummariseOutput:
    wanted = [s.segment_id for s in segments]
    line_counts = {s.segment_id: len(s.lines) for s in segments}
    kept: list[SegmentSummary] = []
    seen: set[str] = set()
    for seg in out.segments:
        if seg.segment_id not in line_counts:
            notes.append(f"dropped unknown segment_id {seg.segment_id!r}")
            continue
        seg = _checked_turns(seg, line_counts[seg.segment_id], notes)
        if seg.segment_id in seen:
            notes.append(f"merged repeated segment_id {seg.segment_id!r}")
            prev = next(k for k in kept if k.segment_id == seg.segment_id)
            have = {f.text for f in prev.facts}
            prev.facts.extend(f for f in seg.facts if f.text not in have)
        else:
            seen.add(seg.segment_id)
            kept.append(seg)
    missing = [sid for sid in wanted if sid not in seen]
    if missing:
        raise InvalidReply(
            f"segments missing from the reply: {missing}. Return every segment_id exactly as "
            "shown, with an empty facts list for a segment that holds no key information"
        )
    order = {sid: i for i, sid in enumerate(wanted)}
    return SummariseOutput(segments=sorted(kept, key=lambda s: order[s.segment_id]))


def _checked_turns(seg: SegmentSummary, lines: int, notes: list[str]) -> SegmentSummary:
    """A copy without model-sent `sources`, whose facts name only lines the segment has: a fact
    naming any other line loses its whole attribution (its summary then stands for the whole
    segment, flagged), since a model that miscounts once may have miscounted throughout."""
    seg = seg.model_copy(deep=True, update={"sources": {}})
    copied = [f.text for f in seg.facts if is_placeholder(f.text) or not _has_words(f.text)]
    if copied:
        notes.append(
            f"dropped template placeholder(s) or wordless text {copied} from segment "
            f"{seg.segment_id!r}"
        )
        seg.facts = [f for f in seg.facts if f.text not in copied]
    for n, fact in enumerate(seg.facts, 1):
        bad = [t for t in fact.turns if not 1 <= t <= lines]
        if bad:
            notes.append(
                f"fact {n} of segment {seg.segment_id!r} names line(s) {bad} of 1..{lines}; "
                "attributed to the whole segment"
            )
            fact.turns = []
    return seg


def check_light(out: LightAnswerOutput) -> LightAnswerOutput:
    if out.complete and not out.answer.strip():
        raise InvalidReply("complete is true but answer is empty")
    _no_placeholder("answer", out.answer)
    return out


def check_select(
    out: SelectOutput, candidates: Sequence[ContextItem], notes: list[str]
) -> SelectOutput:
    known = {c.id for c in candidates}
    chosen: list[str] = []
    unknown: list[str] = []
    for cid in out.ids:
        cid = cid.strip()
        if cid in known:
            if cid not in chosen:
                chosen.append(cid)
        else:
            unknown.append(cid)
    if unknown:
        notes.append(f"dropped ids not among the candidates: {unknown}")
    if not chosen and unknown:
        # an explicit empty list is a valid verdict (nothing relevant in this batch); only a
        # reply whose ids are all made up needs repair
        raise InvalidReply(
            "ids must name at least one of the candidate ids exactly as shown"
            + (f"; these are not candidates: {unknown}" if unknown else "")
        )
    return SelectOutput(ids=chosen)


def check_deep(out: DeepAnswerOutput) -> DeepAnswerOutput:
    if not out.answer.strip():
        raise InvalidReply("answer is empty")
    _no_placeholder("answer", out.answer)
    return out


def check_reflect(out: ReflectOutput) -> ReflectOutput:
    if not out.complete and not (out.new_question or "").strip():
        raise InvalidReply("complete is false but new_question is empty")
    if not out.complete:
        _no_placeholder("new_question", out.new_question)
    return out


def check_update(out: UpdateOutput, newer: Sequence[ContextItem], notes: list[str]) -> UpdateOutput:
    if out.action == "update" and not (out.text or "").strip():
        raise InvalidReply("action is 'update' but text is empty")
    if out.action == "update":
        _no_placeholder("text", out.text)
    if out.evidence_id is not None and out.evidence_id not in {n.id for n in newer}:
        notes.append(f"dropped evidence_id {out.evidence_id!r}: not among the newer memories")
        out = out.model_copy(update={"evidence_id": None})
    if out.action == "delete" and out.evidence_id is None and len(newer) == 1:
        notes.append("evidence_id inferred: only one newer memory was shown")
        out = out.model_copy(update={"evidence_id": newer[0].id})
    if out.action == "delete" and out.evidence_id is None:
        raise InvalidReply("action is 'delete' but evidence_id names none of the newer memories")
    return out


def fallback_select(candidates: Sequence[ContextItem]) -> SelectOutput:
    """The first half (at least one) of the candidates, in their given (similarity) order."""
    keep = max(1, (len(candidates) + 1) // 2)
    return SelectOutput(ids=[c.id for c in candidates[:keep]])


def fallback_deep(pool: Sequence[str]) -> tuple[DeepAnswerOutput, str]:
    """The latest non-empty answer from earlier rounds, else an explicit inability."""
    for answer in reversed(pool):
        if answer and answer.strip():
            return DeepAnswerOutput(answer=answer), "used the best earlier answer"
    return DeepAnswerOutput(answer=UNABLE_TO_ANSWER), "no usable answer"
