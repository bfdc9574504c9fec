"""Everything an import checks before its first write: each line, the links, the end line.

An imported record passes the checks `add()` and the write path apply, through their own
validators (none is repeated here):
    * a turn's id, speaker and text through `write.messages.normalise_message` (normalised as
      `add()` normalises: NFC, lone surrogates to U+FFFD, control characters such as NUL
      removed; at most 64 Ki characters; an id must already be in that normal form, because
      other records link to it);
    * user and session ids through `validation.check_user_id` / `check_session_id`;
    * metadata through `metadata.check_metadata` (key pattern, reserved keys, finite numbers);
    * segment and summary texts through `textclean.normalise_text`, as model replies are, and a
      summary's text within `validation.check_memory_text`'s limit (4,000 characters);
    * integers (seq, token_count, version) within 0..2**53, times converted by `time.to_utc`.
Then the file as a whole: no id twice within a kind, turns in strictly increasing `seq`, a
stored turn's segment in the file and listing it, every summary's segment, `previous_id` and
`superseded_by` in the file, and an `end` line whose counts are exactly what was read.

Every refusal is a `UserInputError` naming the file and the line, and nothing reaches the
store before all of it passed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hymem.core.errors import InvalidMessageError, UserInputError
from hymem.core.metadata import check_metadata
from hymem.core.textclean import normalise_text
from hymem.core.time import to_utc, to_utc_or_none
from hymem.core.types import SegmentRecord, SummaryRecord, TurnRecord, TurnStatus
from hymem.core.validation import check_memory_text, check_session_id, check_user_id
from hymem.write.messages import MAX_ID_CHARS, MAX_MESSAGE_CHARS, normalise_message
from pydantic import ValidationError

FORMAT_VERSION = 2  # 2: summaries carry memory_id, valid_from, valid_to, fact_key
READABLE_FORMATS = (1, 2)  # a 0.2 export (format 1) still imports
KINDS = ("turn", "segment", "summary")
MAX_INT = 2**53  # seq, token_count, version: exact as float64, within int64
SEGMENT_LINE_SLACK = 1_024  # a segment line's "[time] speaker: " prefix, per turn
Record = TurnRecord | SegmentRecord | SummaryRecord
_MODELS: dict[str, type[TurnRecord] | type[SegmentRecord] | type[SummaryRecord]] = {
    "turn": TurnRecord,
    "segment": SegmentRecord,
    "summary": SummaryRecord,
}


class LineError(Exception):
    """A reason a line is refused; `ImportCheck` adds the file and line number."""


def _id(value: object, what: str) -> str:
    """An id as stored and linked: a non-blank string already in `normalise_text`'s form."""
    if not isinstance(value, str) or not value.strip():
        raise LineError(f"{what} must be a non-empty string")
    if len(value) > MAX_ID_CHARS:
        raise LineError(f"{what} is longer than {MAX_ID_CHARS} characters")
    if normalise_text(value) != value:
        raise LineError(f"{what} {value!r} holds control characters, surrogates or padding")
    return value


def _opt_id(value: str | None, what: str) -> str | None:
    return None if value is None else _id(value, what)


def _int(value: int, what: str, low: int = 0) -> int:
    if not low <= value <= MAX_INT:
        raise LineError(f"{what} must be an integer from {low} to 2**53, got {value}")
    return value


def _text(value: str, what: str, limit: int) -> str:
    text = normalise_text(value)
    if not text:
        raise LineError(f"{what} is empty or whitespace only")
    if len(text) > limit:
        raise LineError(f"{what} has {len(text):,} characters; the limit is {limit:,}")
    return text


def _opt_text(value: str | None) -> str | None:
    return None if value is None else normalise_text(value)


def _turn(rec: TurnRecord) -> TurnRecord:
    _id(rec.id, "id")
    msg = {"id": rec.id, "speaker": rec.speaker, "text": rec.text}
    try:
        norm = normalise_message(msg, default_time=rec.created_at)
    except InvalidMessageError as exc:
        raise LineError(exc.reason) from None
    if rec.status is TurnStatus.STORED and rec.segment_id is None:
        raise LineError("a stored turn must name its segment (segment_id)")
    return rec.model_copy(
        update={
            "session_id": check_session_id(rec.session_id),
            "seq": _int(rec.seq, "seq"),
            "speaker": norm.speaker,
            "text": norm.text,
            "timestamp": to_utc_or_none(rec.timestamp),
            "segment_id": _opt_id(rec.segment_id, "segment_id"),
            "created_at": to_utc(rec.created_at),
            "metadata": check_metadata(rec.metadata),
        }
    )


def _segment(rec: SegmentRecord) -> SegmentRecord:
    _id(rec.id, "id")
    if not rec.turn_ids:
        raise LineError("a segment must list its turns (turn_ids)")
    limit = (MAX_MESSAGE_CHARS + SEGMENT_LINE_SLACK) * len(rec.turn_ids)
    return rec.model_copy(
        update={
            "session_ids": [check_session_id(s) for s in rec.session_ids],
            "turn_ids": [_id(t, "a turn id") for t in rec.turn_ids],
            "text": _text(rec.text, "text", limit),
            "compressed_text": _opt_text(rec.compressed_text),
            "token_count": _int(rec.token_count, "token_count"),
            "time_start": to_utc_or_none(rec.time_start),
            "time_end": to_utc_or_none(rec.time_end),
            "vector": None,
            "created_at": to_utc(rec.created_at),
            "metadata": check_metadata(rec.metadata),
        }
    )


def _summary(rec: SummaryRecord) -> SummaryRecord:
    _id(rec.id, "id")
    return rec.model_copy(
        update={
            "segment_id": _id(rec.segment_id, "segment_id"),
            "text": check_memory_text(normalise_text(rec.text)),
            "vector": None,
            "time_start": to_utc_or_none(rec.time_start),
            "time_end": to_utc_or_none(rec.time_end),
            "topic": _opt_text(rec.topic),
            "source_turn_ids": [_id(t, "a source turn id") for t in rec.source_turn_ids],
            "context": normalise_text(rec.context),
            "version": _int(rec.version, "version", 1),
            "superseded_by": _opt_id(rec.superseded_by, "superseded_by"),
            "previous_id": _opt_id(rec.previous_id, "previous_id"),
            "reason": _opt_text(rec.reason),
            "evidence_id": _opt_id(rec.evidence_id, "evidence_id"),
            "created_at": to_utc(rec.created_at),
            "updated_at": to_utc(rec.updated_at),
            "metadata": check_metadata(rec.metadata),
            "memory_id": _id(rec.memory_id, "memory_id"),
            "valid_from": to_utc_or_none(rec.valid_from),
            "valid_to": to_utc_or_none(rec.valid_to),
            "fact_key": _opt_text(rec.fact_key),
        }
    )


_CHECKS: dict[str, Any] = {"turn": _turn, "segment": _segment, "summary": _summary}


@dataclass
class ImportCheck:
    """Fed a file's lines in order (`line`), then `finish`: the records, checked and linked."""

    path: Path
    source: str | None = None
    format: int = FORMAT_VERSION
    ended: bool = False
    last: int = 0
    found: dict[str, list[Any]] = field(default_factory=lambda: {k: [] for k in KINDS})
    lines: dict[str, dict[str, int]] = field(default_factory=lambda: {k: {} for k in KINDS})

    def _where(self, n: int) -> str:
        return f"{self.path}, line {n}"

    def line(self, n: int, raw: str) -> None:
        self.last = n
        try:
            self._line(n, raw)
        except LineError as exc:
            raise UserInputError(f"{self._where(n)}: {exc}") from None
        except UserInputError as exc:  # a shared validator's message, given its line
            raise UserInputError(f"{self._where(n)}: {exc}") from None

    def _line(self, n: int, raw: str) -> None:
        try:
            data = json.loads(raw)
        except RecursionError:
            raise LineError("nested too deeply to be a hymem export record") from None
        except ValueError:
            raise LineError("not a hymem export record") from None
        kind = data.pop("kind", None) if isinstance(data, dict) else None
        if not isinstance(kind, str):
            raise LineError("not a hymem export record")
        if n == 1:
            fmt = data.get("format")
            if kind != "header" or isinstance(fmt, bool) or fmt not in READABLE_FORMATS:
                raise LineError(f"not a hymem export (format {READABLE_FORMATS})")
            self.format = int(fmt)
            source = data.get("user_id")
            if source is None:
                raise LineError("the header names no user_id")
            self.source = check_user_id(source)
            return
        if self.ended or kind not in (*KINDS, "end"):
            raise LineError(f"unexpected record {kind!r}")
        if kind == "end":
            self._end(data)
            return
        try:
            rec = _MODELS[kind].model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            at = ".".join(str(p) for p in first["loc"])
            raise LineError(f"invalid {kind}: {at}: {first['msg']}") from None
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise LineError(f"invalid {kind}: {type(exc).__name__}") from None
        if rec.user_id != self.source:
            raise LineError(f"the {kind} belongs to another user than the header")
        rec = _CHECKS[kind](rec)
        if rec.id in self.lines[kind]:
            raise LineError(f"{kind} id {rec.id!r} repeats line {self.lines[kind][rec.id]}")
        turns = self.found["turn"]
        if isinstance(rec, TurnRecord) and turns and rec.seq <= turns[-1].seq:
            raise LineError(f"turn seq {rec.seq} does not follow the previous turn's")
        self.lines[kind][rec.id] = n
        self.found[kind].append(rec)

    def _end(self, data: dict[str, Any]) -> None:
        counts = data.get("counts")
        read = {k: len(v) for k, v in self.found.items()}
        if not isinstance(counts, dict) or set(counts) != set(KINDS):
            raise LineError(f"the end line's counts must give exactly {', '.join(KINDS)}")
        for kind in KINDS:
            given = counts[kind]
            if isinstance(given, bool) or not isinstance(given, int) or given < 0:
                raise LineError(f"the end line's {kind} count is not a count: {given!r}")
            if given != read[kind]:
                raise LineError(
                    f"the end line counts {given} {kind} records but the file holds "
                    f"{read[kind]}: lines are missing or added (export it again)"
                )
        self.ended = True

    def finish(self, user_id: str | None) -> tuple[str, dict[str, list[Any]]]:
        """The links, then the records (re-owned by `user_id` when given)."""
        if self.source is None:
            raise UserInputError(f"{self._where(1)}: not a hymem export (the file is empty)")
        if not self.ended:
            raise UserInputError(
                f"{self._where(self.last)}: the file ends before its end line (truncated?): "
                "export it again"
            )
        self._links()
        target = check_user_id(user_id) if user_id is not None else self.source
        if target == self.source:
            return target, self.found
        return target, {
            k: [r.model_copy(update={"user_id": target}) for r in v] for k, v in self.found.items()
        }

    def _links(self) -> None:
        segments: dict[str, SegmentRecord] = {s.id: s for s in self.found["segment"]}
        summaries = self.lines["summary"]
        for turn in self.found["turn"]:
            if turn.segment_id is None:
                continue
            seg = segments.get(turn.segment_id)
            if seg is None or turn.id not in seg.turn_ids:
                why = "is not in the file" if seg is None else "does not list the turn"
                self._refuse("turn", turn.id, f"the turn's segment {turn.segment_id!r} {why}")
        for rec in self.found["summary"]:
            if rec.segment_id not in segments:
                why = f"the summary's segment {rec.segment_id!r} is not in the file"
                self._refuse("summary", rec.id, why)
            for name in ("previous_id", "superseded_by"):
                other = getattr(rec, name)
                if other is not None and other not in summaries:
                    self._refuse("summary", rec.id, f"{name} {other!r} is not in the file")
            if self.format >= 2 and rec.memory_id not in summaries:
                self._refuse("summary", rec.id, f"memory_id {rec.memory_id!r} is not in the file")
        if self.format < 2:  # before memory ids: each version's chain root is its memory
            self.found["summary"] = with_memory_ids(self.found["summary"])

    def _refuse(self, kind: str, rec_id: str, why: str) -> None:
        raise UserInputError(f"{self._where(self.lines[kind][rec_id])}: {why}")


def with_memory_ids(records: list[SummaryRecord]) -> list[SummaryRecord]:
    """Records of a format-1 file with the memory id a schema-5 store would give them: the
    first version of their `previous_id` chain (as the store's own upgrade does)."""
    by_id = {r.id: r for r in records}
    out = []
    for rec in records:
        root, seen = rec, {rec.id}
        while root.previous_id in by_id and root.previous_id not in seen:
            root = by_id[root.previous_id]
            seen.add(root.id)
        out.append(rec.model_copy(update={"memory_id": root.id}))
    return out


__all__ = ["FORMAT_VERSION", "KINDS", "READABLE_FORMATS", "ImportCheck", "with_memory_ids"]
