"""Export one user's memory as JSON Lines, and import such a file into another store.

Format (version 2), one JSON object per line, `kind` first:

    {"kind": "header", "format": 2, "user_id": ..., "exported_at": ..., "hymem": ...,
     "embedder": ...}
    {"kind": "turn", ...TurnRecord}        every turn, by sequence
    {"kind": "segment", ...SegmentRecord}  every Level-2 segment, without its vector
    {"kind": "summary", ...SummaryRecord}  every version of every summary, without its vector
    {"kind": "end", "counts": {"turn": n, "segment": n, "summary": n}}

Links are the records' own fields: a turn's `segment_id`, a segment's `turn_ids`, a summary's
`segment_id`, `source_turn_ids`, `previous_id`, `superseded_by` and `memory_id` (format 2: the
memory every version belongs to; a format-1 file, written before memory ids, still imports and
its versions get their chain's first id as memory id, as a store's own upgrade gives them).
Vectors are left out: they belong to an embedder, and the importing store re-embeds with its
own (turn vectors pooled into segment vectors as the write path does; summaries embedded from
their text). The `end` line
makes a truncated file detectable; import refuses one. Times are ISO 8601, naive UTC.

Import is all or nothing: `import_check` checks every line, link and count before the first
write, and `import_file` says what a failure during the writes leaves.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from hymem.core.errors import UserInputError
from hymem.core.time import marked_utc, utcnow
from hymem.core.types import SegmentRecord, SummaryRecord, TurnRecord, TurnStatus
from hymem.core.validation import check_user_id
from hymem.core.version import __version__
from hymem.embed.embedders import Embedder
from hymem.manage.import_check import FORMAT_VERSION, ImportCheck
from hymem.manage.ports import EditStore
from hymem.write.pooling import pooled_vector
from pydantic import BaseModel

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


def _records(store: EditStore, user_id: str, level: str) -> Iterator[Record]:
    after = None
    while True:
        page = store.page(user_id, level, after=after, limit=PAGE)
        yield from page
        if len(page) < PAGE:
            return
        last = page[-1]
        after = (last.seq if isinstance(last, TurnRecord) else last.created_at, last.id)


def export_user(store: EditStore, user_id: str, out: Path) -> ExportReport:
    """Written to `out.tmp` and renamed, so `out` is complete or absent."""
    report = ExportReport(user_id=user_id, path=str(out))
    tmp = out.with_name(out.name + ".tmp")
    header = {
        "kind": "header",
        "format": FORMAT_VERSION,
        "user_id": user_id,
        "exported_at": marked_utc(utcnow()).isoformat(),
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
        with path.open("r", encoding="utf-8", newline="\n") as fh:
            header = json.loads(fh.readline())
        user = header.get("user_id")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, RecursionError) as exc:
        raise UserInputError(f"cannot read {path}: not a hymem export ({exc})") from exc
    if user is None:
        raise UserInputError(f"{path}, line 1: the header names no user_id")
    try:
        return check_user_id(user)
    except UserInputError as exc:
        raise UserInputError(f"{path}, line 1: {exc}") from None


def read_export(path: Path, user_id: str | None) -> tuple[str, dict[str, list[Any]]]:
    """Parse and check a whole export (`import_check`); returns (user id to import as, records
    by kind). Any refused line, link or count is a UserInputError naming the line, raised
    before anything is written. Lines are split at "\n" only, as `export_user` writes them (a
    U+2028 in a text is not a line break)."""
    check = ImportCheck(path)
    n = 0
    try:
        with path.open("r", encoding="utf-8", newline="\n") as fh:
            for n, raw in enumerate(fh, 1):
                check.line(n, raw)
    except UnicodeDecodeError as exc:
        raise UserInputError(f"{path}, line {n + 1}: not UTF-8 ({exc.reason})") from None
    except OSError as exc:
        raise UserInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return check.finish(user_id)


def import_file(
    store: EditStore, embedder: Embedder, path: Path, *, user_id: str | None
) -> ImportReport:
    """All or nothing: the whole file is checked before the first write (`read_export`), so
    what can still fail is the store or the embedder. Turns are written pending and become
    stored only in the commit of their segment, so no turn is ever stored without one. A
    failure during the writes withdraws exactly what this run wrote (`Commits.withdraw`):
    the store is as it was before it, including what an earlier, interrupted import of the
    same file had left (segments already there are not written again)."""
    target, found = read_export(path, user_id)
    turns: list[TurnRecord] = found["turn"]
    mine = {t.id for t in store.get_turns(target)}
    if mine - {t.id for t in turns}:
        raise UserInputError(
            f"user {target!r} already holds other turns in this memory: import into a new "
            "user id (user_id=...), or erase that user first"
        )
    held = {s.id for s in store.get_segments(target, [s.id for s in found["segment"]])}
    vectors = _turn_vectors(embedder, turns)  # before the first write: the model may fail too
    written: dict[str, list[str]] = {"turns": [], "segments": []}
    try:
        return _write(store, embedder, target, found, vectors, held, written)
    except Exception as exc:
        try:
            store.withdraw(
                target, [t for t in written["turns"] if t not in mine], written["segments"]
            )
            exc.add_note(
                f"the import into {target!r} was rolled back (nothing it wrote is kept): "
                "remove the cause and run it again"
            )
        except Exception as undo:
            exc.add_note(
                f"rolling the import back failed too: {undo}; the roll back is journaled "
                "and finishes on the next open, or run the import again to finish it"
            )
        raise


def _write(
    store: EditStore,
    embedder: Embedder,
    target: str,
    found: dict[str, list[Any]],
    vectors: dict[str, np.ndarray],
    held: set[str],
    written: dict[str, list[str]],
) -> ImportReport:
    """`held`: segments the store already has (an earlier run's commits, each whole), skipped.
    `written` collects what this run wrote, for the roll back; the report counts it too."""
    turns: list[TurnRecord] = found["turn"]
    report = ImportReport(user_id=target)
    pending = [
        t.model_copy(update={"status": TurnStatus.PENDING, "segment_id": None}) for t in turns
    ]
    written["turns"] = [t.id for t in pending]  # before the call: it may land and then fail
    report.turns = len(store.append_turns(pending))
    by_segment: dict[str, list[SummaryRecord]] = {}
    for rec in found["summary"]:
        by_segment.setdefault(rec.segment_id, []).append(rec)
    segments: list[SegmentRecord] = found["segment"]
    for sid in held:
        by_segment.pop(sid, None)
    fresh = [seg for seg in segments if seg.id not in held]
    stored_in = {t.id: t.segment_id for t in turns if t.status is TurnStatus.STORED}
    for i in range(0, len(fresh), COMMIT_SEGMENTS):
        chunk = fresh[i : i + COMMIT_SEGMENTS]
        ids = {seg.id for seg in chunk}
        sums = [s for seg in chunk for s in by_segment.pop(seg.id, [])]
        _embed(embedder, chunk, sums, vectors)
        covered = [tid for seg in chunk for tid in seg.turn_ids if stored_in.get(tid) in ids]
        written["segments"].extend(ids)
        store.commit_segments(target, chunk, sums, list(dict.fromkeys(covered)))
        report.segments += len(chunk)
        report.summaries += len(sums)
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
