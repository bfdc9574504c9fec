"""LongMemEval's file format, read strictly: a JSON list (`.json` or `.json.gz`) of questions,
each with its own history ("haystack") of dated sessions.

Per question: `question_id`, `question_type`, `question`, `answer`, `question_date`,
`haystack_session_ids`, `haystack_dates` and `haystack_sessions` (parallel lists; a session is a
list of turns `{"role", "content", ["has_answer"]}`), `answer_session_ids`. Dates look like
`2023/05/30 (Tue) 23:40` and are parsed by `parse_lme_date` only, never guessed.

Damage is contained where it is found, so one bad item never costs a run: a question with
missing keys, a bad `question_date` or malformed sessions is skipped; a session whose date does
not parse is dropped from its question; a turn with empty content is kept in the numbering (turn
ids count every turn) but never ingested or indexed; a session repeated verbatim under the same
id is kept once. Each skip is returned in `LmeDataset.skipped`, naming the question; the loader
does not log them, because which of them matter depends on the questions a run selects (the
harness warns about those, `log_skips`). Only a file that is not the format at all raises
`DatasetFormatError`.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from hymem.core.errors import UserInputError
from hymem.core.logging import get_logger
from hymem.evaluation.errors import DatasetFormatError
from pydantic import BaseModel, ConfigDict, Field

log = get_logger("hymem.evaluation.longmemeval")

# "2023/05/30 (Tue) 23:40"
_DATE = re.compile(
    r"^(?P<y>\d{4})/(?P<mo>\d{2})/(?P<d>\d{2}) \((?P<wd>Mon|Tue|Wed|Thu|Fri|Sat|Sun)\) "
    r"(?P<h>\d{2}):(?P<mi>\d{2})$"
)
REQUIRED_KEYS = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
)


def parse_lme_date(text: object) -> datetime:
    """LongMemEval's `2023/05/30 (Tue) 23:40` as a naive datetime (the benchmark's dates carry
    no zone; hymem reads naive times as UTC). The weekday must agree with the date, so a
    mangled stamp is refused rather than read as some other day. UserInputError otherwise."""
    m = _DATE.match(text) if isinstance(text, str) else None
    if m is None:
        raise UserInputError(f"date {text!r} is not in the form 2023/05/30 (Tue) 23:40")
    try:
        when = datetime(int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]))
    except ValueError as exc:
        raise UserInputError(f"date {text!r} does not exist ({exc})") from None
    if when.strftime("%a") != m["wd"]:
        raise UserInputError(f"date {text!r}: {when:%Y/%m/%d} is a {when:%A}, not {m['wd']}")
    return when


class LmeTurn(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str  # "<session_id>_<index>", the benchmark's own turn id
    index: int  # 1-based, over every turn of the session, both roles
    role: str
    content: str
    has_answer: bool = False

    @property
    def usable(self) -> bool:
        """False for empty content: such a turn is skipped for ingestion and indexing."""
        return bool(self.content.strip())


class LmeSession(BaseModel):
    id: str
    date: datetime
    date_text: str
    turns: list[LmeTurn]


class LmeQuestion(BaseModel):
    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: datetime
    question_date_text: str
    sessions: list[LmeSession]  # file order; dropped sessions are absent
    answer_session_ids: list[str]

    @property
    def abstention(self) -> bool:
        """The benchmark marks unanswerable questions with `_abs` in their id."""
        return "_abs" in self.question_id

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def sessions_in_time_order(self) -> list[LmeSession]:
        """Oldest first (ties keep file order): how a user's history would have arrived."""
        return sorted(self.sessions, key=lambda s: s.date)


SkipKind = Literal["question", "session", "turn"]


class Skip(BaseModel):
    """Something of the file left out, and why."""

    kind: SkipKind
    question_id: str
    item: str  # the question, session or turn id
    reason: str


class LmeDataset(BaseModel):
    questions: list[LmeQuestion]
    skipped: list[Skip] = Field(default_factory=list)


def _turns(session_id: str, raw: object, skipped: list[Skip], qid: str) -> list[LmeTurn]:
    if not isinstance(raw, list):
        raise UserInputError(f"session {session_id} is not a list of turns")
    turns = []
    for i, t in enumerate(raw, 1):
        if not isinstance(t, dict) or not isinstance(t.get("role"), str):
            raise UserInputError(f"turn {i} of session {session_id} has no role")
        content = t.get("content")
        if not isinstance(content, str):
            raise UserInputError(f"turn {i} of session {session_id} has no text content")
        turn = LmeTurn(
            id=f"{session_id}_{i}",
            index=i,
            role=t["role"],
            content=content,
            has_answer=bool(t.get("has_answer", False)),
        )
        if not turn.usable:
            _skip(skipped, "turn", qid, turn.id, "empty content")
        turns.append(turn)
    return turns


def _sessions(raw: dict[str, Any], qid: str, skipped: list[Skip]) -> list[LmeSession]:
    ids, dates, sessions = (
        raw["haystack_session_ids"],
        raw["haystack_dates"],
        raw["haystack_sessions"],
    )
    if not all(isinstance(x, list) for x in (ids, dates, sessions)):
        raise UserInputError("haystack_session_ids, _dates and _sessions must be lists")
    if not len(ids) == len(dates) == len(sessions):
        raise UserInputError(
            f"haystack lists differ in length ({len(ids)} ids, {len(dates)} dates, "
            f"{len(sessions)} sessions)"
        )
    out: list[LmeSession] = []
    first: dict[str, object] = {}
    for sid, stamp, turns in zip(ids, dates, sessions, strict=True):
        sid = str(sid)
        if sid in first:
            # The benchmark repeats a few sessions verbatim under another date; their turn ids
            # would collide, so the first occurrence is kept. Differing content is ambiguous.
            if turns != first[sid]:
                raise UserInputError(f"session id {sid} repeats with different turns")
            _skip(skipped, "session", qid, sid, "repeated session (same turns); first kept")
            continue
        first[sid] = turns
        try:
            date = parse_lme_date(stamp)
        except UserInputError as exc:
            _skip(skipped, "session", qid, sid, str(exc))
            continue
        out.append(
            LmeSession(id=sid, date=date, date_text=stamp, turns=_turns(sid, turns, skipped, qid))
        )
    return out


def parse_question(raw: object, index: int, skipped: list[Skip]) -> LmeQuestion | None:
    """One question, or None (recorded in `skipped`) when it cannot be used."""
    qid = str(raw.get("question_id", f"item {index}")) if isinstance(raw, dict) else f"item {index}"
    if not isinstance(raw, dict):
        _skip(skipped, "question", qid, qid, "not a JSON object")
        return None
    missing = [k for k in REQUIRED_KEYS if k not in raw]
    if missing:
        _skip(skipped, "question", qid, qid, f"missing keys {missing}")
        return None
    local: list[Skip] = []
    try:
        question = LmeQuestion(
            question_id=qid,
            question_type=str(raw["question_type"]),
            question=str(raw["question"]),
            answer=str(raw["answer"]),
            question_date=parse_lme_date(raw["question_date"]),
            question_date_text=raw["question_date"],
            sessions=_sessions(raw, qid, local),
            answer_session_ids=[str(s) for s in raw["answer_session_ids"]],
        )
    except (UserInputError, TypeError) as exc:
        _skip(skipped, "question", qid, qid, str(exc))
        return None
    if not question.question.strip():
        _skip(skipped, "question", qid, qid, "empty question")
        return None
    skipped.extend(local)
    return question


def parse_longmemeval(data: object, source: str = "<data>") -> LmeDataset:
    """The questions of already-decoded JSON; DatasetFormatError when it is not the format."""
    if not isinstance(data, list):
        raise DatasetFormatError(
            f"{source}: expected a JSON list of LongMemEval questions, got {type(data).__name__}"
        )
    if not data:
        raise DatasetFormatError(f"{source}: the list holds no questions")
    skipped: list[Skip] = []
    questions: list[LmeQuestion] = []
    seen: set[str] = set()
    for i, raw in enumerate(data):
        q = parse_question(raw, i, skipped)
        if q is None:
            continue
        if q.question_id in seen:
            _skip(skipped, "question", q.question_id, q.question_id, "repeated question_id")
            continue
        seen.add(q.question_id)
        questions.append(q)
    if not questions:
        first = skipped[0] if skipped else None
        why = f" ({first.question_id}: {first.reason})" if first else ""
        raise DatasetFormatError(f"{source}: no item is a usable LongMemEval question{why}")
    return LmeDataset(questions=questions, skipped=skipped)


def load_longmemeval(path: str | Path) -> LmeDataset:
    """Read `.json` or `.json.gz` (by content, so a misnamed file still reads)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        data = json.loads(raw)
    except FileNotFoundError:
        raise UserInputError(f"dataset {path} does not exist") from None
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetFormatError(f"{path} is not LongMemEval JSON: {exc}") from None
    return parse_longmemeval(data, str(path))


def _skip(skipped: list[Skip], kind: SkipKind, qid: str, item: str, reason: str) -> None:
    skipped.append(Skip(kind=kind, question_id=qid, item=item, reason=reason))


def selected_skips(dataset: LmeDataset, chosen: Iterable[str]) -> list[Skip]:
    """What a run over the questions `chosen` (ids) lost to the loader: every question left out
    of the file (no selection can reach it) and the sessions and turns left out of the chosen
    questions. Skips inside questions the run did not select are not its concern."""
    ids = set(chosen)
    return [s for s in dataset.skipped if s.kind == "question" or s.question_id in ids]


def log_skips(skips: Iterable[Skip]) -> None:
    """One warning per skip, naming the question, the item and why."""
    for s in skips:
        log.warning(
            "longmemeval.skip", kind=s.kind, question_id=s.question_id, item=s.item, reason=s.reason
        )


__all__ = [
    "LmeDataset",
    "LmeQuestion",
    "LmeSession",
    "LmeTurn",
    "Skip",
    "load_longmemeval",
    "log_skips",
    "parse_lme_date",
    "parse_longmemeval",
    "parse_question",
    "selected_skips",
]
