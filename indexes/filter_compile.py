"""A parsed `Filter` compiled for each backend; `Filter.matches` is the semantics they share.

* LanceDB (`to_sql`): equality and membership test the typed tokens of the `meta_tokens` list
  column (`array_has`, `array_has_any`); ranges read the `meta_num` map column
  (`map_extract(meta_num, 'key')[1]`, NULL for a record without that number, so it never
  matches). Past `SCALAR_INDEX_MIN_ROWS` rows the token column has a LABEL_LIST index (the
  agent_id / run_id scopes are tokens like any key). Negations are `NOT coalesce(..., false)`,
  so the SQL three-valued logic never differs from the reference's two values. Every token
  and key is a literal made by `filters.sql_literal`; numbers are Python float reprs of
  checked, finite values.
* Tantivy (`to_tantivy`): the raw `meta` field holds the same tokens plus each number's
  range prefixes (`metadata.range_tokens`), so every condition is a term or term-set query
  (ranges: `metadata.range_cover`) and no text is parsed.
* numpy (`mask`): a record's metadata is one of few distinct dicts (a segment's turns share
  one, its summaries inherit it), so the reference evaluator runs once per distinct dict and
  the rows take its answer by index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import tantivy
from hymem.core.filters import Filter, Group, Match, Node, Range
from hymem.core.metadata import eq_token, range_cover, sortable
from hymem.core.types import MetaValue
from hymem.indexes.lance import sql as F

TOKENS_COLUMN = "meta_tokens"
NUMBERS_COLUMN = "meta_num"
LEXICAL_FIELD = "meta"
_TOP = 2**64 - 1


def to_sql(f: Filter) -> str:
    """A where-clause fragment for LanceDB (DataFusion SQL) selecting the matching rows."""
    return _sql(f.node)


def _sql(node: Node) -> str:
    if isinstance(node, Group):
        joiner = " AND " if node.kind == "and" else " OR "
        return joiner.join(f"({_sql(p)})" for p in node.parts)
    if isinstance(node, Match):
        tokens = [F.sql_literal(eq_token(node.key, v)) for v in dict.fromkeys(node.values)]
        if len(tokens) == 1:
            test = f"array_has({TOKENS_COLUMN}, {tokens[0]})"
        else:
            test = f"array_has_any({TOKENS_COLUMN}, make_array({', '.join(tokens)}))"
        # bare when positive, so a LABEL_LIST index on the column serves it (NULL excludes)
        return f"NOT coalesce({test}, false)" if node.negate else test
    value = f"map_extract({NUMBERS_COLUMN}, {F.sql_literal(node.key)})[1]"
    parts = []
    if node.lo is not None:
        parts.append(f"{value} {'>=' if node.lo_inclusive else '>'} {_number(node.lo)}")
    if node.hi is not None:
        parts.append(f"{value} {'<=' if node.hi_inclusive else '<'} {_number(node.hi)}")
    return " AND ".join(parts) if parts else f"{value} IS NOT NULL"


def _number(x: float) -> str:
    """A float literal DataFusion reads back exactly (finite: checked at parse time)."""
    return repr(float(x))


def sortable_bounds(node: Range) -> tuple[int, int]:
    """The range as an inclusive interval of sortable keys (empty when lo > hi)."""
    lo = 0 if node.lo is None else sortable(node.lo) + (0 if node.lo_inclusive else 1)
    hi = _TOP if node.hi is None else sortable(node.hi) - (0 if node.hi_inclusive else 1)
    return lo, hi


def to_tantivy(schema: tantivy.Schema, f: Filter) -> tantivy.Query:
    """A Tantivy query over the `meta` field selecting the matching documents."""
    return _tantivy(schema, f.node)


def _tantivy(s: tantivy.Schema, node: Node) -> tantivy.Query:
    Q, Occur = tantivy.Query, tantivy.Occur
    if isinstance(node, Group):
        occur = Occur.Must if node.kind == "and" else Occur.Should
        return Q.boolean_query([(occur, _tantivy(s, p)) for p in node.parts])
    if isinstance(node, Match):
        tokens = list(dict.fromkeys(eq_token(node.key, v) for v in node.values))
        query = Q.term_set_query(s, LEXICAL_FIELD, tokens)
        if not node.negate:
            return query
        return Q.boolean_query([(Occur.Must, Q.all_query()), (Occur.MustNot, query)])
    lo, hi = sortable_bounds(node)
    cover = range_cover(node.key, lo, hi)
    return Q.term_set_query(s, LEXICAL_FIELD, cover) if cover else Q.empty_query()


def mask(f: Filter, meta_ids: np.ndarray, metas: Sequence[Mapping[str, MetaValue]]) -> np.ndarray:
    """Rows whose metadata (`metas[meta_ids[row]]`) matches: one evaluation per distinct dict."""
    ok = np.fromiter((f.matches(m) for m in metas), dtype=bool, count=len(metas))
    if not len(ok):
        return np.zeros(len(meta_ids), dtype=bool)
    rows: np.ndarray = ok[meta_ids]
    return rows


__all__ = [
    "LEXICAL_FIELD",
    "NUMBERS_COLUMN",
    "TOKENS_COLUMN",
    "mask",
    "sortable_bounds",
    "to_sql",
    "to_tantivy",
]
