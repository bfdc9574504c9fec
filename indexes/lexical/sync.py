"""Keeping the derived Tantivy index in step with LanceDB, the source of truth.

`lexical_sync.json` records the LanceDB table versions (and the lexical schema version) the index
last matched. On open, a record that differs from LanceDB's versions, or per-level counts that
differ, mean the index missed a write (a crash between the two, a deleted folder), and it is
rebuilt from LanceDB. An index that cannot be used at all (missing, unreadable: see
`LexicalIndex.problem`) or a record that cannot be read is worse than stale: `unusable` says
why, a writer rebuilds from a fresh folder and a reader stops searching it. The document
builders here are the one mapping from rows to `LexDoc`s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hymem.core.errors import StoreCorruptedError
from hymem.core.metadata import decode, lexical_tokens
from hymem.core.types import Level, SummaryStatus
from hymem.indexes.jsonfile import read_json, write_json_atomic
from hymem.indexes.keys import lexical_text
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.table_state import TableState
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.index import LEXICAL_SCHEMA_VERSION, LexDoc, LexicalIndex

SYNC_FILE = "lexical_sync.json"
LEX_COLS = ["id", "user_id", "text", "time_start", "time_end", "metadata"]
SUMMARY_LEX_COLS = [*LEX_COLS, "status", "context"]
# Rows read from LanceDB per batch while rebuilding: bounds memory at any store size.
REBUILD_BATCH_ROWS = 10_000
# Documents between two progress callbacks: often enough for a progress bar, rarely enough to
# cost nothing.
PROGRESS_EVERY = 1_000


def _meta_tokens(r: dict[str, Any]) -> tuple[str, ...]:
    """The row's metadata (stored JSON, or a dict) as the Tantivy `meta` field's tokens."""
    meta = r.get("metadata")
    return tuple(lexical_tokens(meta if isinstance(meta, dict) else decode(meta)))


def summary_doc(r: dict[str, Any]) -> LexDoc:
    text = lexical_text(r["text"], r.get("context"))
    return LexDoc(
        r["id"],
        r["user_id"],
        Level.SUMMARY,
        text,
        r["status"],
        r["time_start"],
        r["time_end"],
        _meta_tokens(r),
    )


def segment_doc(r: dict[str, Any]) -> LexDoc:
    return LexDoc(
        r["id"],
        r["user_id"],
        Level.SEGMENT,
        r["text"],
        "active",
        r["time_start"],
        r["time_end"],
        _meta_tokens(r),
    )


def _reporting(docs: Iterator[LexDoc], progress: Callable[[int], None]) -> Iterator[LexDoc]:
    n = 0
    for doc in docs:
        yield doc
        n += 1
        if n == PROGRESS_EVERY:
            progress(n)
            n = 0
    if n:
        progress(n)


class LexicalSync:
    """The sync record of one store folder, and the rebuild that restores agreement."""

    def __init__(self, folder: Path, lance: LanceTables, lex: LexicalIndex) -> None:
        self._file = folder / SYNC_FILE
        self._lance = lance
        self._lex = lex
        self.tables = TableState(folder, lance)

    def _state(self) -> dict[str, Any]:
        return {
            "lexical_schema_version": LEXICAL_SCHEMA_VERSION,
            "segments": self._lance.version(S.SEGMENTS),
            "summaries": self._lance.version(S.SUMMARIES),
        }

    def record(self) -> None:
        """Note that the index now matches LanceDB's current table versions (and what each
        table holds now, for the damage check on open: `table_state`)."""
        write_json_atomic(self._file, self._state())
        self.tables.record()

    def _recorded(self) -> dict[str, Any] | None:
        try:
            return read_json(self._file)
        except StoreCorruptedError:
            return None  # `unusable` reports it

    def unusable(self) -> str | None:
        """Why the index cannot be trusted at all (not merely stale), or None."""
        if self._lex.problem is not None:
            return f"lexical index unusable: {self._lex.problem}"
        try:
            read_json(self._file)
        except StoreCorruptedError as exc:
            return f"sync record unreadable: {exc}"
        return None

    def disable(self, reason: str) -> None:
        """Stop lexical search on a read-only store (which may not rebuild)."""
        self._lex.disable(reason)

    def disagreement(self) -> str | None:
        """Why the lexical index disagrees with LanceDB, or None when it agrees."""
        unusable = self.unusable()
        if unusable is not None:
            return unusable
        if self._recorded() != self._state():
            return "sync record differs from LanceDB versions"
        for level, table in ((Level.SUMMARY, S.SUMMARIES), (Level.SEGMENT, S.SEGMENTS)):
            if self._lex.count(level) != self._lance.count(table):
                return f"{level.value} counts differ"
        active = self._lance.count(S.SUMMARIES, F.eq("status", SummaryStatus.ACTIVE.value))
        if self._lex.count(Level.SUMMARY, SummaryStatus.ACTIVE.value) != active:
            return "active summary counts differ"
        return None

    def after_purge(self) -> None:
        """An erasure purged rows: rebuild aside, so no old segment keeps their bytes."""
        self.rebuild(fresh=True)

    def catch_up(self) -> dict[str, int]:
        """A folder has one writer: there is never anything of another's to catch up on."""
        return {}

    def lag_s(self) -> float | None:
        """A folder has one writer: no lag."""
        return None

    def maybe_catch_up(self) -> None:
        """A folder has one writer: its index is never behind another's commits."""

    def _docs(self) -> Iterator[LexDoc]:
        for batch in self._lance.batches(S.SUMMARIES, None, SUMMARY_LEX_COLS, REBUILD_BATCH_ROWS):
            yield from (summary_doc(r) for r in batch.to_pylist())
        for batch in self._lance.batches(S.SEGMENTS, None, LEX_COLS, REBUILD_BATCH_ROWS):
            yield from (segment_doc(r) for r in batch.to_pylist())

    def rebuild(
        self, progress: Callable[[int], None] | None = None, *, fresh: bool = False
    ) -> dict[str, int]:
        """Re-index every summary and segment from LanceDB (one Tantivy commit), then record
        the sync; returns documents per level. `fresh` (forced for a damaged index) builds a
        new folder instead of reusing the one on disk."""
        docs = self._docs()
        if progress is not None:
            docs = _reporting(docs, progress)
        self._lex.rebuild(docs, fresh=fresh)
        self.record()
        return {lvl.value: self._lex.count(lvl) for lvl in Level}


__all__ = [
    "LEX_COLS",
    "SUMMARY_LEX_COLS",
    "SYNC_FILE",
    "LexicalSync",
    "segment_doc",
    "summary_doc",
]
