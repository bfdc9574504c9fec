"""Upgrading a store folder written by an older hymem, in place, when a writer opens it.

Schema 1 -> 2: summaries gain `source_turn_ids` and `attribution`. A summary written before them
cannot say which of its segment's turns it came from, so it gets all of them, flagged
`attribution="segment"`, exactly like a summary whose model gave no usable attribution. The
columns are added empty, then filled a batch at a time (a `merge_insert` of just those columns),
and only then does the folder's meta say 2: a crash anywhere leaves a version-1 folder whose
next open finishes the job (rows already filled are not touched again).

Schema 2 -> 3: summaries gain `context`, the index-only key `hymem.indexes.keys` describes,
computed from their segments' text; the same crash rule holds (`context IS NULL` marks the rows
still to fill).

Schema 3 -> 4: turns gain `metadata` (its JSON), segments and summaries gain it plus the two
filter columns (`meta_tokens`, `meta_num`). Rows written before metadata existed have none,
so each table is filled with the empty form by one `update` of the rows whose `metadata IS
NULL` (one atomic LanceDB commit per table); a crash between tables leaves a version-3 folder
whose next open adds and fills what is missing.

Schema 4 -> 5: summaries gain `memory_id` (the id every version of one memory shares: its
first version's, found by following `previous_id`), `valid_from` (when the fact was said:
its time_start, else time_end, else when it was written), `valid_to` and `fact_key` (both left
empty: no older fact was superseded by a newer value, and fact keys are found by the engine,
which fills them at the next sleep). `valid_from` is filled by one `update`; `memory_id` a
batch at a time, `memory_id IS NULL` marking the rows still to fill after a crash.

A reader cannot upgrade (it writes nothing), so it refuses an old folder with a message saying
how to upgrade it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from hymem.core.logging import get_logger
from hymem.core.types import Attribution
from hymem.indexes.keys import summary_context
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.tables import LanceTables

log = get_logger("hymem.indexes.lance.migrate")

FILL_BATCH_ROWS = 10_000


def _v1_to_v2(lance: LanceTables) -> int:
    """Adds and fills the summaries' provenance columns; returns the rows filled."""
    table = lance.table(S.SUMMARIES)
    have = set(table.schema.names)
    wanted = S.summaries_schema(1)
    new = [wanted.field(c) for c in ("source_turn_ids", "attribution") if c not in have]
    if new:
        table.add_columns(new)
    turns_of: dict[str, list[str]] = {}
    for batch in lance.batches(S.SEGMENTS, None, ["id", "turn_ids"], FILL_BATCH_ROWS):
        for seg_id, turn_ids in zip(
            batch.column("id").to_pylist(), batch.column("turn_ids").to_pylist(), strict=True
        ):
            turns_of[seg_id] = list(turn_ids or [])
    filled = 0
    todo = "attribution IS NULL"  # rows a crashed earlier run did not reach
    for batch in lance.batches(S.SUMMARIES, todo, ["id", "segment_id"], FILL_BATCH_ROWS):
        ids = batch.column("id").to_pylist()
        segs = batch.column("segment_id").to_pylist()
        update = pa.table(
            {
                "id": pa.array(ids, pa.string()),
                "source_turn_ids": pa.array([turns_of.get(s, []) for s in segs], S.STR_LIST),
                "attribution": pa.array([Attribution.SEGMENT.value] * len(ids), pa.string()),
            }
        )
        table.merge_insert("id").when_matched_update_all().execute(update)
        filled += len(ids)
    return filled


def _v2_to_v3(lance: LanceTables) -> int:
    """Adds the summaries' `context` key and fills it from their segments' text (the tail of
    the line before each summary's first source line, as the write path now stores it)."""
    table = lance.table(S.SUMMARIES)
    if "context" not in set(table.schema.names):
        table.add_columns([S.summaries_schema(1).field("context")])
    todo = "context IS NULL"  # rows a crashed earlier run did not reach
    pending: dict[str, list[tuple[str, list[str]]]] = {}  # segment id -> (summary id, sources)
    for batch in lance.batches(
        S.SUMMARIES, todo, ["id", "segment_id", "source_turn_ids"], FILL_BATCH_ROWS
    ):
        for row in batch.to_pylist():
            pending.setdefault(row["segment_id"], []).append(
                (row["id"], list(row["source_turn_ids"] or []))
            )
    filled = 0
    cols = ["id", "turn_ids", "text"]
    for batch in lance.batches(S.SEGMENTS, None, cols, FILL_BATCH_ROWS):
        ids: list[str] = []
        contexts: list[str] = []
        for seg in batch.to_pylist():
            lines = (seg["text"] or "").split("\n")
            for summary_id, sources in pending.pop(seg["id"], []):
                ids.append(summary_id)
                contexts.append(summary_context(lines, seg["turn_ids"] or [], sources))
        filled += _fill_context(table, ids, contexts)
    orphans = [summary_id for rows in pending.values() for summary_id, _ in rows]
    return filled + _fill_context(table, orphans, [""] * len(orphans))


def _fill_context(table: Any, ids: list[str], contexts: list[str]) -> int:
    for at in range(0, len(ids), FILL_BATCH_ROWS):
        update = pa.table(
            {
                "id": pa.array(ids[at : at + FILL_BATCH_ROWS], pa.string()),
                "context": pa.array(contexts[at : at + FILL_BATCH_ROWS], pa.string()),
            }
        )
        table.merge_insert("id").when_matched_update_all().execute(update)
    return len(ids)


def _v3_to_v4(lance: LanceTables) -> int:
    """Adds the metadata columns and gives every older row empty metadata."""
    wanted = {
        S.TURNS: S.turns_schema(),
        S.SEGMENTS: S.segments_schema(1),
        S.SUMMARIES: S.summaries_schema(1),
    }
    filled = 0
    for name, schema in wanted.items():
        filled += _fill_metadata(lance, name, schema)
    return filled


# The empty form of each metadata column, as SQL (`update` takes expressions).
_EMPTY = {
    "metadata": "'{}'",
    "meta_tokens": "arrow_cast(make_array(), 'List(Utf8)')",
    "meta_num": (
        "map(arrow_cast(make_array(), 'List(Utf8)'), arrow_cast(make_array(), 'List(Float64)'))"
    ),
}


def _fill_metadata(lance: LanceTables, name: str, schema: pa.Schema) -> int:
    table = lance.table(name)
    have = set(table.schema.names)
    cols = [c for c in ("metadata", "meta_tokens", "meta_num") if c in schema.names]
    missing = [schema.field(c) for c in cols if c not in have]
    if missing:
        table.add_columns(missing)
    todo = "metadata IS NULL"  # rows a crashed earlier run did not reach
    rows = lance.count(name, todo)
    if rows:
        table.update(where=todo, values_sql={c: _EMPTY[c] for c in cols})
    return rows


def _v4_to_v5(lance: LanceTables) -> int:
    """Adds the summaries' memory id, validity and fact key; fills memory ids and valid_from."""
    table = lance.table(S.SUMMARIES)
    have = set(table.schema.names)
    missing = [S.summaries_schema(1).field(c) for c, _ in S.SUMMARY_V5 if c not in have]
    if missing:
        table.add_columns(missing)
    if lance.count(S.SUMMARIES, "valid_from IS NULL"):
        table.update(
            where="valid_from IS NULL",
            values_sql={"valid_from": "coalesce(time_start, time_end, created_at)"},
        )
    previous: dict[tuple[str, str], str | None] = {}
    for batch in lance.batches(
        S.SUMMARIES, None, ["user_id", "id", "previous_id"], FILL_BATCH_ROWS
    ):
        for user, sid, prev in zip(
            batch.column("user_id").to_pylist(),
            batch.column("id").to_pylist(),
            batch.column("previous_id").to_pylist(),
            strict=True,
        ):
            previous[(user, sid)] = prev
    filled = 0
    todo = "memory_id IS NULL"  # rows a crashed earlier run did not reach
    for batch in lance.batches(S.SUMMARIES, todo, ["user_id", "id"], FILL_BATCH_ROWS):
        users, ids = batch.column("user_id").to_pylist(), batch.column("id").to_pylist()
        update = pa.table(
            {
                "user_id": pa.array(users, pa.string()),
                "id": pa.array(ids, pa.string()),
                "memory_id": pa.array(
                    [_root(u, i, previous) for u, i in zip(users, ids, strict=True)], pa.string()
                ),
            }
        )
        table.merge_insert(["user_id", "id"]).when_matched_update_all().execute(update)
        filled += len(ids)
    return filled


def _root(user: str, sid: str, previous: dict[tuple[str, str], str | None]) -> str:
    """The first version of `sid`'s chain (a cycle or a missing link stops the walk)."""
    seen = {sid}
    while (prev := previous.get((user, sid))) and prev not in seen and (user, prev) in previous:
        seen.add(prev)
        sid = prev
    return sid


# from-version -> the step to the next version
MIGRATIONS: dict[int, Callable[[LanceTables], int]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
}


def can_migrate(found: object) -> bool:
    """Whether a folder of schema `found` can be brought to S.SCHEMA_VERSION here."""
    return isinstance(found, int) and found in MIGRATIONS and found < S.SCHEMA_VERSION


def migrate(lance: LanceTables, found: int, folder: str) -> None:
    """Every step from `found` to S.SCHEMA_VERSION, in order (the caller then records the new
    version in the folder's meta)."""
    version = found
    while version < S.SCHEMA_VERSION:
        rows = MIGRATIONS[version](lance)
        log.info("store.migrated", path=folder, from_version=version, rows=rows)
        version += 1


__all__ = ["MIGRATIONS", "can_migrate", "migrate"]
