"""Export one user's memory as JSON Lines, and import such a file into another store.

Format (version 1), one JSON object per line, `kind` first:

    {"kind": "header", "format": 1, "user_id": ..., "exported_at": ..., "hymem": ...,
     "embedder": ...}
    {"kind": "turn", ...TurnRecord}        every turn, by sequence
    {"kind": "segment", ...SegmentRecord}  every Level-2 segment, without its vector
    {"kind": "summary", ...SummaryRecord}  every version of every summary, without its vector
    {"kind": "end", "counts": {"turn": n, "segment": n, "summary": n}}

Links are the records' own fields: a turn's `segment_id`, a segment's `turn_ids`, a summary's
`segment_id`, `source_turn_ids`, `previous_id` and `superseded_by`. Vectors are left out: they
belong to an embedder, and the importing store re-embeds with its own (turn vectors pooled into
segment vectors as the write path does; summaries embedded from their text). The `end` line
makes a truncated file detectable; import refuses one. Times are ISO 8601, naive UTC.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from hymem.embedders import Embedder
from hymem.errors import UserInputError
from hymem.indexes.protocol import Storage
from hymem.time import utcnow
from hymem.types import SegmentRecord, SummaryRecord, TurnRecord, TurnStatus
from hymem.write.pooling import pooled_vector
from pydantic import BaseModel, ValidationError

FORMAT_VERSION = 1
PAGE = 1_000
COMMIT_SEGMENTS = 200  # segments (with their summaries) per journaled commit on import
Record = TurnRecord | SegmentRecord | SummaryRecord
_MODELS: dict[str, type[TurnRecord] | type[SegmentRecord] | type[SummaryRecord]] = {
    "turn": TurnRecord,
    "segment": SegmentRecord,
    "summary": SummaryRecord,
}


class ExportReport(BaseModel):
    user_id: str
    path: str
    turns: int = 0
    segments: int = 0
    summaries: int = 0


class ImportReport(BaseModel):
    user_id: str
    turns: int = 0  # turns newly written (a re-import writes none)
    segments: int = 0
    summaries: int = 0


def _records(store: Storage, user_id: str, level: str) -> Iterator[Record]:
    after = None
    while True:
        page = store.page(user_id, level, after=after, limit=PAGE)
        yield from page
        if len(page) < PAGE:
            return
        last = page[-1]
        after = (last.seq if isinstance(last, TurnRecord) else last.created_at, last.id)


def export_user(store: Storage, user_id: str, out: Path) -> ExportReport:
    """Written to `out.tmp` and renamed, so `out` is complete or absent."""
    from hymem import __version__

    report = ExportReport(user_id=user_id, path=str(out))
    tmp = out.with_name(out.name + ".tmp")
    header = {
        "kind": "header",
        "format": FORMAT_VERSION,
        "user_id": user_id,
        "exported_at": utcnow().isoformat(),
        "hymem": __version__,
        "embedder": store.meta().get("embedder"),
    }
    counts: dict[str, int] = {}
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(json.dumps(header, ensure_ascii=False) + "\n")
            for level in _MODELS:
                counts[level] = 0
                for rec in _records(store, user_id, level):
                    row = {"kind": level, **rec.model_dump(mode="json", exclude={"vector"})}
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    counts[level] += 1
            fh.write(json.dumps({"kind": "end", "counts": counts}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserInputError(f"cannot write the export to {out}: {exc.strerror or exc}") from exc
    report.turns, report.segments, report.summaries = (counts[k] for k in _MODELS)
    return report


def read_export_user(path: Path) -> str:
    """The user id an export's header names (the whole file is validated by `read_export`)."""
    try:
        with path.open("r", encoding="utf-8") as fh:
            header = json.loads(fh.readline())
        user = header.get("user_id")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError) as exc:
        raise UserInputError(f"cannot read {path}: not a hymem export ({exc})") from exc
    if not isinstance(user, str) or not user:
        raise UserInputError(f"{path}, line 1: the header names no user_id")
    return user


def read_export(path: Path, user_id: str | None) -> tuple[str, dict[str, list[Any]]]:
    """Parse and validate a whole export; returns (user id to import as, records by kind).
    Any malformed line, a record of another user, or a missing end line is a UserInputError
    naming the line, and nothing is written."""
    found: dict[str, list[Any]] = {k: [] for k in _MODELS}
    source: str | None = None
    ended = False
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserInputError(f"cannot read {path}: {exc}") from exc
    for n, line in enumerate(lines, 1):
        where = f"{path}, line {n}"
        try:
            data = json.loads(line)
            kind = data.pop("kind")
        except (ValueError, KeyError, TypeError, AttributeError):
            raise UserInputError(f"{where}: not a hymem export record") from None
        if n == 1:
            if kind != "header" or data.get("format") != FORMAT_VERSION:
                raise UserInputError(f"{where}: not a hymem export (format {FORMAT_VERSION})")
            source = data.get("user_id")
            if not isinstance(source, str) or not source:
                raise UserInputError(f"{where}: the header names no user_id")
            continue
        if ended or kind not in (*_MODELS, "end"):
            raise UserInputError(f"{where}: unexpected record {kind!r}")
        if kind == "end":
            ended = True
            continue
        try:
            rec: Record = _MODELS[kind].model_validate(data)
        except ValidationError as exc:
            raise UserInputError(f"{where}: invalid {kind}: {exc.errors()[0]['msg']}") from None
        if rec.user_id != source:
            raise UserInputError(f"{where}: the {kind} belongs to another user than the header")
        found[kind].append(rec)
    if source is None or not ended:
        raise UserInputError(f"{path} is truncated (no end line): export it again")
    target = user_id or source
    if target != source:
        found = {k: [r.model_copy(update={"user_id": target}) for r in v] for k, v in found.items()}
    return target, found


def import_file(
    store: Storage, embedder: Embedder, path: Path, *, user_id: str | None
) -> ImportReport:
    target, found = read_export(path, user_id)
    turns: list[TurnRecord] = found["turn"]
    mine = {t.id for t in store.get_turns(target)}
    if mine - {t.id for t in turns}:
        raise UserInputError(
            f"user {target!r} already holds other turns in this memory: import into a new "
            "user id (user_id=...), or erase that user first"
        )
    report = ImportReport(user_id=target)
    report.turns = len(store.append_turns(turns))
    vectors = _turn_vectors(embedder, turns)
    by_segment: dict[str, list[SummaryRecord]] = {}
    for rec in found["summary"]:
        by_segment.setdefault(rec.segment_id, []).append(rec)
    segments: list[SegmentRecord] = found["segment"]
    stored = {t.id for t in turns if t.status is TurnStatus.STORED}
    for i in range(0, len(segments), COMMIT_SEGMENTS):
        chunk = segments[i : i + COMMIT_SEGMENTS]
        sums = [s for seg in chunk for s in by_segment.pop(seg.id, [])]
        _embed(embedder, chunk, sums, vectors)
        covered = [tid for seg in chunk for tid in seg.turn_ids if tid in stored]
        store.commit_segments(target, chunk, sums, list(dict.fromkeys(covered)))
        report.segments += len(chunk)
        report.summaries += len(sums)
    if by_segment:
        orphans = sum(len(v) for v in by_segment.values())
        raise UserInputError(f"{path}: {orphans} summaries link to segments the file lacks")
    return report


def _turn_vectors(embedder: Embedder, turns: list[TurnRecord]) -> dict[str, np.ndarray]:
    if not turns:
        return {}
    mat = np.asarray(embedder.embed([t.text for t in turns]), dtype=np.float32)
    return {t.id: row for t, row in zip(turns, mat, strict=True)}


def _embed(
    embedder: Embedder,
    segments: list[SegmentRecord],
    summaries: list[SummaryRecord],
    turn_vectors: dict[str, np.ndarray],
) -> None:
    """Vectors as the write path makes them: a segment's pooled from its turns' (its text
    embedded if the file lacks its turns), a summary's embedded from its text."""
    for seg in segments:
        rows = [turn_vectors[t] for t in seg.turn_ids if t in turn_vectors]
        if rows:
            seg.vector = pooled_vector(np.stack(rows))
        else:
            seg.vector = np.asarray(embedder.embed([seg.text]))[0].tolist()
    if summaries:
        mat = np.asarray(embedder.embed([s.text for s in summaries]))
        for rec, row in zip(summaries, mat, strict=True):
            rec.vector = row.tolist()


__all__ = [
    "ExportReport",
    "ImportReport",
    "export_user",
    "import_file",
    "read_export",
    "read_export_user",
]
