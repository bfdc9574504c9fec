"""The LoCoMo dataset's reader, shared by the backfill (`locomo_histories`, `hymem ingest
locomo`) and the evaluation harness, which sits above it (`hymem.evaluation.locomo_data` is the
old name of this module and still serves its names).

The file is a JSON list of conversations: `sample_id`, `conversation` (`speaker_a`, `speaker_b`,
`session_N` turn lists and `session_N_date_time` stamps such as "1:56 pm on 8 May, 2023"), and
`qa` items. The dataset's annotations (`observation`, `session_summary`, `event_summary`) are
derived from the answers' evidence, so they are never loaded: a memory built from them would
be cheating.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from hymem.core.errors import UserInputError
from hymem.core.time import parse_timestamp
from pydantic import BaseModel, ConfigDict, field_validator

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_CAPTION_PREFIX = re.compile(r"^\s*(a|an)\s+(photo|picture|image)\s+of\s+", re.IGNORECASE)

# "1:56 pm on 8 May, 2023" / "10:37 am on 27 June, 2023" (LoCoMo session_N_date_time). The core
# parses general absolute dates (`hymem.core.time`); this strict parser reads LoCoMo's stamps
# exactly, without going through dateparser's heuristics.
_LOCOMO = re.compile(
    r"^\s*(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[ap]\.?m\.?)\s+on\s+"
    r"(?P<d>\d{1,2})\s+(?P<mon>[A-Za-z]+),?\s+(?P<y>\d{4})\s*$",
    re.IGNORECASE,
)
_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}


def parse_locomo_datetime(text: str) -> datetime | None:
    """LoCoMo's "1:56 pm on 8 May, 2023"; None when the text has another shape."""
    m = _LOCOMO.match(text)
    if m is None:
        return None
    month = _MONTHS.get(m["mon"].lower())
    hour, minute = int(m["h"]), int(m["m"])
    if month is None or not 1 <= hour <= 12:
        return None
    if m["ampm"].lower().startswith("p") and hour != 12:
        hour += 12
    elif m["ampm"].lower().startswith("a") and hour == 12:
        hour = 0
    try:
        return datetime(int(m["y"]), month, int(m["d"]), hour, minute)
    except ValueError:
        return None


def parse_session_time(text: str) -> datetime:
    """A LoCoMo session stamp, or any timestamp hymem accepts; UserInputError otherwise."""
    found = parse_locomo_datetime(text) if isinstance(text, str) else None
    return found if found is not None else parse_timestamp(text)


class LocomoTurn(BaseModel):
    model_config = ConfigDict(frozen=True)

    dia_id: str
    speaker: str
    text: str
    img_url: str | None = None
    blip_caption: str | None = None

    @field_validator("img_url", mode="before")
    @classmethod
    def _first_url(cls, v: Any) -> Any:
        """The dataset stores a list of URLs; the first is the one shown."""
        if isinstance(v, list):
            return str(v[0]) if v else None
        return v

    def render_text(self) -> str:
        """The turn as a text-only model sees it: image turns carry their caption.

        A caption's own leading "a photo of" is dropped so it does not read twice."""
        if not self.blip_caption:
            return self.text
        caption = _CAPTION_PREFIX.sub("", self.blip_caption.strip())
        return f"{self.text} [shares a photo of {caption}]".strip()


class LocomoSession(BaseModel):
    index: int
    session_id: str  # "session_1"
    date_time: datetime
    turns: list[LocomoTurn]


class LocomoQA(BaseModel):
    question: str
    answer: str  # stringified; for category 5 the adversarial answer
    evidence: list[str]
    category: int


class LocomoConversation(BaseModel):
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[LocomoSession]
    qa: list[LocomoQA]

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def _sessions(conv: dict[str, Any], sample_id: str) -> list[LocomoSession]:
    sessions = []
    for key, value in conv.items():
        m = _SESSION_KEY.match(key)
        if m is None or not isinstance(value, list):
            continue
        stamp = conv.get(f"{key}_date_time")
        if stamp is None:
            raise UserInputError(f"{sample_id}: {key} has no {key}_date_time")
        turns = [
            LocomoTurn(
                dia_id=t["dia_id"],
                speaker=t["speaker"],
                text=t.get("text", ""),
                img_url=t.get("img_url"),
                blip_caption=t.get("blip_caption"),
            )
            for t in value
        ]
        sessions.append(
            LocomoSession(
                index=int(m[1]), session_id=key, date_time=parse_session_time(stamp), turns=turns
            )
        )
    return sorted(sessions, key=lambda s: s.index)


def _qa(item: dict[str, Any]) -> LocomoQA:
    category = int(item["category"])
    answer = item.get("answer")
    if answer is None or category == 5:
        answer = item.get("adversarial_answer", answer)
    return LocomoQA(
        question=item["question"],
        answer="" if answer is None else str(answer),
        evidence=[str(e) for e in item.get("evidence", [])],
        category=category,
    )


def parse_locomo(data: list[dict[str, Any]]) -> list[LocomoConversation]:
    """Build the models from already-decoded JSON."""
    out: list[LocomoConversation] = []
    for raw in data:
        sample_id = str(raw.get("sample_id", f"conv-{len(out)}"))
        try:
            conv = raw["conversation"]
            out.append(
                LocomoConversation(
                    sample_id=sample_id,
                    speaker_a=conv["speaker_a"],
                    speaker_b=conv["speaker_b"],
                    sessions=_sessions(conv, sample_id),
                    qa=[_qa(q) for q in raw.get("qa", [])],
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, UserInputError):
                raise
            raise UserInputError(f"{sample_id}: not in LoCoMo format ({exc!r})") from exc
    return out


def load_locomo(path: str | Path) -> list[LocomoConversation]:
    """Load a LoCoMo-format JSON file; raises UserInputError on a missing or malformed file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserInputError(f"cannot read LoCoMo file {path}: {exc}") from exc
    if not isinstance(data, list):
        raise UserInputError(f"{path}: expected a JSON list of conversations")
    return parse_locomo(data)


def conversation_messages(
    conv: LocomoConversation,
) -> Iterator[tuple[str, datetime, list[dict[str, Any]]]]:
    """(session_id, session time, add()-ready messages) in session order.

    Message ids are the dataset's dia_ids, so re-ingesting a conversation is idempotent and
    retrieved turns map straight back to the questions' evidence."""
    for session in conv.sessions:
        messages = [
            {
                "speaker": t.speaker,
                "text": t.render_text(),
                "id": t.dia_id,
                "timestamp": session.date_time,
            }
            for t in session.turns
            if t.render_text().strip()
        ]
        yield session.session_id, session.date_time, messages


__all__ = [
    "LocomoConversation",
    "LocomoQA",
    "LocomoSession",
    "LocomoTurn",
    "conversation_messages",
    "load_locomo",
    "parse_locomo",
    "parse_locomo_datetime",
    "parse_session_time",
]
