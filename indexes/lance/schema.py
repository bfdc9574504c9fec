"""Arrow schemas of the LanceDB tables and the record <-> row conversions.

Nothing outside `hymem.indexes` should know the column layout: records go in, records come out.
Vectors are fixed-size float32 lists of the store's dimension; times are naive-UTC microsecond
timestamps: every datetime passes through `hymem.core.time.to_utc` on its way in (see
`hymem.core.time`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
from hymem.core import metadata as M
from hymem.core.errors import StoreError, UserInputError
from hymem.core.time import to_utc, to_utc_or_none, utcnow
from hymem.core.types import SegmentRecord, SummaryRecord, TurnRecord
from hymem.indexes.protocol import Vector
from pydantic import BaseModel

# 2: summaries' source_turn_ids and attribution; 3: their context; 4: metadata; 5: their
# memory id, validity and fact key (`migrate`)
SCHEMA_VERSION = 5

TS = pa.timestamp("us")
STR_LIST = pa.list_(pa.string())
NUM_MAP = pa.map_(pa.string(), pa.float64())
# schema 4, last in each table (a migrated table has the same column order): the JSON copy
# that round-trips, and on segments and summaries the two filter columns (`meta_compile`)
META_JSON = ("metadata", pa.string())
META_FILTER = [("meta_tokens", STR_LIST), ("meta_num", NUM_MAP)]
DERIVED = {"meta_tokens", "meta_num"}  # computed from `metadata`, never a record field

TURNS = "turns"
SEGMENTS = "segments"
SUMMARIES = "summaries"
TRACES = "traces"
META = "meta"


def vector_type(dim: int) -> pa.DataType:
    return pa.list_(pa.float32(), dim)


def turns_schema() -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.string()),
            ("user_id", pa.string()),
            ("session_id", pa.string()),
            ("seq", pa.int64()),
            ("speaker", pa.string()),
            ("text", pa.string()),
            ("timestamp", TS),
            ("status", pa.string()),
            ("segment_id", pa.string()),
            ("created_at", TS),
            META_JSON,
        ]
    )


def segments_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.string()),
            ("user_id", pa.string()),
            ("session_ids", STR_LIST),
            ("turn_ids", STR_LIST),
            ("text", pa.string()),
            ("time_start", TS),
            ("time_end", TS),
            ("token_count", pa.int64()),
            ("compressed_text", pa.string()),
            ("vector", vector_type(dim)),
            ("created_at", TS),
            META_JSON,
            *META_FILTER,
        ]
    )


def summaries_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.string()),
            ("user_id", pa.string()),
            ("segment_id", pa.string()),
            ("text", pa.string()),
            ("vector", vector_type(dim)),
            ("time_start", TS),
            ("time_end", TS),
            ("topic", pa.string()),
            ("status", pa.string()),
            ("version", pa.int64()),
            ("superseded_by", pa.string()),
            ("previous_id", pa.string()),
            ("reason", pa.string()),
            ("evidence_id", pa.string()),
            ("origin", pa.string()),
            ("created_at", TS),
            ("updated_at", TS),
            # schema 2, last so that a migrated table (`migrate`) has the same column order
            ("source_turn_ids", STR_LIST),
            ("attribution", pa.string()),
            ("context", pa.string()),  # schema 3
            META_JSON,
            *META_FILTER,
            *SUMMARY_V5,
        ]
    )


# schema 5, last in the summaries table: the stable memory id, validity and fact key
SUMMARY_V5 = [
    ("memory_id", pa.string()),
    ("valid_from", TS),
    ("valid_to", TS),
    ("fact_key", pa.string()),
]


TRACE_COLUMNS: dict[str, pa.DataType] = {
    "trace_id": pa.string(),
    "user_id": pa.string(),
    "created_at": TS,
    "question": pa.string(),
    "depth": pa.string(),
    "path": pa.string(),
    "escalated": pa.bool_(),
    "escalation_reason": pa.string(),
    "iterations": pa.int64(),
    "complete": pa.bool_(),
    "answer": pa.string(),
    "backend": pa.string(),
    "total_tokens": pa.int64(),
    "total_calls": pa.int64(),
    "latency_ms_total": pa.float64(),
}


def traces_schema() -> pa.Schema:
    return pa.schema([*TRACE_COLUMNS.items(), ("payload", pa.string())])


def meta_schema() -> pa.Schema:
    return pa.schema([("key", pa.string()), ("value", pa.string())])


# --- records -> Arrow ------------------------------------------------------------------------
def vector_matrix(records: Sequence[SegmentRecord | SummaryRecord], dim: int) -> np.ndarray:
    """The records' vectors as one float32 (n, dim) matrix; records without a vector or with
    the wrong size, and non-finite values, are rejected. Every store validates through here."""
    mat = np.empty((len(records), dim), dtype=np.float32)
    for i, rec in enumerate(records):
        if rec.vector is None:
            raise UserInputError(f"{type(rec).__name__} {rec.id!r} has no vector")
        if len(rec.vector) != dim:
            raise UserInputError(
                f"{type(rec).__name__} {rec.id!r} has a {len(rec.vector)}-d vector; "
                f"the store holds {dim}-d vectors"
            )
        mat[i] = rec.vector
    if not np.isfinite(mat).all():
        raise UserInputError("vectors must be finite")
    return mat


def check_query_vector(vector: Vector, dim: int) -> None:
    """A query vector of another dimension than the store's is a StoreError (not a caller's
    input mistake: the embedder and the store disagree). Every store checks through here."""
    if len(vector) != dim:
        raise StoreError(f"query vector has {len(vector)} dimensions; the store holds {dim}")


def _vectors(records: Sequence[SegmentRecord | SummaryRecord], dim: int) -> pa.Array:
    """One contiguous float32 buffer, validated by `vector_matrix`."""
    mat = vector_matrix(records, dim)
    return pa.FixedSizeListArray.from_arrays(pa.array(mat.reshape(-1)), dim)


def _columns(records: Sequence[BaseModel], schema: pa.Schema, skip: set[str]) -> dict[str, Any]:
    cols: dict[str, Any] = {}
    for field in schema:
        if field.name in skip:
            continue
        if field.name in DERIVED or field.name == "metadata":
            cols[field.name] = _meta_column(field.name, records)
            continue
        values = [getattr(r, field.name) for r in records]
        if pa.types.is_string(field.type):
            values = [None if v is None else str(v) for v in values]
        elif pa.types.is_timestamp(field.type):
            values = [to_utc_or_none(v) for v in values]
        cols[field.name] = pa.array(values, type=field.type)
    return cols


def _meta_column(name: str, records: Sequence[BaseModel]) -> pa.Array:
    metas = [getattr(r, "metadata", None) or {} for r in records]
    if name == "metadata":
        return pa.array([M.canonical(m) for m in metas], type=pa.string())
    if name == "meta_tokens":
        return pa.array([M.eq_tokens(m) for m in metas], type=STR_LIST)
    return pa.array([M.numbers(m) for m in metas], type=NUM_MAP)


def decode_metadata(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows read from LanceDB with their `metadata` JSON as a dict (in place; {} for rows
    without it) and the derived filter columns dropped."""
    for row in rows:
        if "metadata" in row and not isinstance(row["metadata"], dict):
            row["metadata"] = M.decode(row["metadata"])
        for name in DERIVED:
            row.pop(name, None)
    return rows


def turns_to_arrow(turns: Sequence[TurnRecord]) -> pa.Table:
    schema = turns_schema()
    return pa.table(_columns(turns, schema, set()), schema=schema)


def segments_to_arrow(segments: Sequence[SegmentRecord], dim: int) -> pa.Table:
    schema = segments_schema(dim)
    cols = _columns(segments, schema, {"vector"})
    cols["vector"] = _vectors(segments, dim)
    return pa.table({f.name: cols[f.name] for f in schema}, schema=schema)


def summaries_to_arrow(summaries: Sequence[SummaryRecord], dim: int) -> pa.Table:
    schema = summaries_schema(dim)
    cols = _columns(summaries, schema, {"vector"})
    cols["vector"] = _vectors(summaries, dim)
    return pa.table({f.name: cols[f.name] for f in schema}, schema=schema)


def trace_row(trace: dict[str, Any]) -> dict[str, Any]:
    """Top-level columns for filtering and dashboards; the whole dict goes into `payload`.
    `created_at` (datetime or ISO string) becomes naive UTC; a missing one is now."""
    row: dict[str, Any] = {}
    for name, typ in TRACE_COLUMNS.items():
        value = trace.get(name)
        if name == "created_at" and isinstance(value, str):
            value = datetime.fromisoformat(value)
        if value is not None and pa.types.is_string(typ):
            value = str(value)
        row[name] = value
    if not row["trace_id"]:
        raise UserInputError("a trace needs a trace_id")
    created = row["created_at"]
    if created is not None and not isinstance(created, datetime):
        raise UserInputError(f"trace created_at must be a datetime, got {created!r}")
    row["created_at"] = utcnow() if created is None else to_utc(created)
    row["payload"] = json.dumps(trace, default=_json_default, ensure_ascii=False)
    return row


def trace_to_arrow(trace: dict[str, Any]) -> pa.Table:
    return pa.Table.from_pylist([trace_row(trace)], schema=traces_schema())


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot serialise {type(value).__name__} in a trace")


def trace_from_row(row: dict[str, Any]) -> dict[str, Any]:
    trace: dict[str, Any] = json.loads(row["payload"])
    trace.update({k: row[k] for k in TRACE_COLUMNS if row.get(k) is not None or k not in trace})
    return trace


# --- Arrow -> records ------------------------------------------------------------------------
R = TypeVar("R", bound=BaseModel)


def rows_to_records(cls: type[R], rows: list[dict[str, Any]]) -> list[R]:
    """Build records from rows, ignoring columns the record does not declare (e.g. _distance)."""
    fields = cls.model_fields
    decode_metadata(rows)
    return [cls.model_validate({k: v for k, v in row.items() if k in fields}) for row in rows]


def similarities(rows: list[dict[str, Any]]) -> list[tuple[str, float]]:
    """(id, cosine similarity) of dense rows (which carry the cosine `_distance`), in order."""
    return [(r["id"], 1.0 - float(r["_distance"])) for r in rows]


__all__ = [
    "META",
    "SCHEMA_VERSION",
    "SEGMENTS",
    "SUMMARIES",
    "TRACES",
    "TURNS",
    "check_query_vector",
    "decode_metadata",
    "meta_schema",
    "rows_to_records",
    "segments_schema",
    "segments_to_arrow",
    "similarities",
    "summaries_schema",
    "summaries_to_arrow",
    "trace_from_row",
    "trace_row",
    "trace_to_arrow",
    "traces_schema",
    "turns_schema",
    "turns_to_arrow",
    "vector_matrix",
]
