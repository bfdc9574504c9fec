"""Metadata filters: the `filters=` argument of search, ask and context, parsed once at the edge
into a small immutable tree that every backend compiles (`meta_compile`) and that `matches`,
the reference evaluator, defines.

Syntax (close to mem0's):

    {"topic": "travel"}                          equality
    {"topic": {"in": ["travel", "food"]}}        membership (also "nin")
    {"topic": {"ne": "work"}}                    inequality
    {"year": {"gte": 2020, "lt": 2024}}          number ranges: gt, gte, lt, lte
    {"and": [{...}, {...}]}, {"or": [...]}       combinators, nestable
    {"topic": "travel", "year": {"gt": 2020}}    several keys: all must hold

Semantics: a key the record lacks never equals, is never in, and is never in a range, so `ne`
and `nin` keep records without the key (as in MongoDB and mem0); values are typed
(`hymem.core.metadata`); ranges take numbers only. Everything the caller can get wrong is a
`UserInputError` naming the offending filter key: unknown operators, wrong value types (a bool
or string in a range, a list for equality), an empty list, too deep or too large a filter.
Keys follow the metadata key pattern and values the metadata value rules, so neither can
change a compiled query: keys are identifiers, and every value becomes an escaped literal or
an exact term.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hymem.core.errors import UserInputError
from hymem.core.metadata import check_key, check_value
from hymem.core.types import MetaValue
from pydantic_core import core_schema

MATCH_OPS = ("eq", "ne", "in", "nin")
RANGE_OPS = ("gt", "gte", "lt", "lte")
OPS = (*MATCH_OPS, *RANGE_OPS)
MAX_DEPTH = 6  # nested and/or levels
MAX_CONDITIONS = 64  # conditions in one filter
MAX_VALUES = 256  # values in one in/nin list


@dataclass(frozen=True, slots=True)
class Match:
    """`key` equals one of `values` (negated: equals none of them, or is absent)."""

    key: str
    values: tuple[MetaValue, ...]
    negate: bool = False


@dataclass(frozen=True, slots=True)
class Range:
    """`key` is a number within the bounds (None: unbounded on that side)."""

    key: str
    lo: float | None = None
    lo_inclusive: bool = True
    hi: float | None = None
    hi_inclusive: bool = True


@dataclass(frozen=True, slots=True)
class Group:
    """All (`and`) or any (`or`) of `parts`."""

    kind: Literal["and", "or"]
    parts: tuple[Node, ...]


Node = Match | Range | Group


def _scalar(key: str, value: object) -> MetaValue:
    if isinstance(value, list | tuple | set | dict):
        raise UserInputError(
            f"filter {key!r}: expected a str, int, float or bool, got {type(value).__name__} "
            "(for a list of values use {'in': [...]})"
        )
    return check_value(key, value, what="filter")


def _number(key: str, op: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UserInputError(
            f"filter {key!r}: {op!r} needs a number, got {type(value).__name__} {value!r}"
        )
    return float(check_value(key, value, what="filter"))


def _values(key: str, op: str, value: object) -> tuple[MetaValue, ...]:
    if not isinstance(value, list | tuple):
        raise UserInputError(f"filter {key!r}: {op!r} needs a list of values")
    if not value:
        raise UserInputError(f"filter {key!r}: {op!r} needs at least one value")
    if len(value) > MAX_VALUES:
        raise UserInputError(f"filter {key!r}: {op!r} takes at most {MAX_VALUES} values")
    return tuple(_scalar(key, v) for v in value)


def _condition(key: str, spec: object) -> list[Node]:
    """One key's condition: a bare value (equality) or a mapping of operators."""
    check_key(key, what="filter")
    if not isinstance(spec, Mapping):
        return [Match(key, (_scalar(key, spec),))]
    if not spec:
        raise UserInputError(f"filter {key!r}: no operator given (use one of {', '.join(OPS)})")
    nodes: list[Node] = []
    bounds: dict[str, float] = {}
    for op, value in spec.items():
        if op not in OPS:
            raise UserInputError(
                f"filter {key!r}: unknown operator {op!r} (use one of {', '.join(OPS)})"
            )
        if op in ("eq", "ne"):
            nodes.append(Match(key, (_scalar(key, value),), negate=op == "ne"))
        elif op in ("in", "nin"):
            nodes.append(Match(key, _values(key, op, value), negate=op == "nin"))
        else:
            bounds[op] = _number(key, op, value)
    if bounds:
        if ("gt" in bounds and "gte" in bounds) or ("lt" in bounds and "lte" in bounds):
            raise UserInputError(f"filter {key!r}: give one lower and one upper bound at most")
        lo_op = "gt" if "gt" in bounds else "gte"
        hi_op = "lt" if "lt" in bounds else "lte"
        nodes.append(
            Range(key, bounds.get(lo_op), lo_op == "gte", bounds.get(hi_op), hi_op == "lte")
        )
    return nodes


class _Parser:
    def __init__(self) -> None:
        self.conditions = 0

    def mapping(self, obj: object, depth: int) -> Node:
        if not isinstance(obj, Mapping):
            raise UserInputError(f"a filter must be a mapping, got {type(obj).__name__}")
        if depth > MAX_DEPTH:
            raise UserInputError(f"filter nests and/or deeper than {MAX_DEPTH} levels")
        parts: list[Node] = []
        for key, spec in obj.items():
            if key in ("and", "or"):
                parts.append(self.group(key, spec, depth))
                continue
            self.conditions += 1
            if self.conditions > MAX_CONDITIONS:
                raise UserInputError(f"a filter holds at most {MAX_CONDITIONS} conditions")
            parts.extend(_condition(key, spec))
        if not parts:
            raise UserInputError("filter: an empty mapping inside and/or matches nothing useful")
        return parts[0] if len(parts) == 1 else Group("and", tuple(parts))

    def group(self, kind: Literal["and", "or"], spec: object, depth: int) -> Node:
        if not isinstance(spec, list | tuple) or not spec:
            raise UserInputError(f"filter {kind!r}: needs a non-empty list of filters")
        parts = tuple(self.mapping(item, depth + 1) for item in spec)
        return parts[0] if len(parts) == 1 else Group(kind, parts)


def matches_node(node: Node, meta: Mapping[str, MetaValue]) -> bool:
    if isinstance(node, Group):
        test = all if node.kind == "and" else any
        return test(matches_node(p, meta) for p in node.parts)
    if node.key not in meta:
        return isinstance(node, Match) and node.negate
    value = meta[node.key]
    if isinstance(node, Match):
        hit = any(_same(value, v) for v in node.values)
        return hit != node.negate
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    x = float(value)
    if node.lo is not None and (x < node.lo or (x == node.lo and not node.lo_inclusive)):
        return False
    return node.hi is None or x < node.hi or (x == node.hi and node.hi_inclusive)


def _same(a: MetaValue, b: MetaValue) -> bool:
    """Typed equality: bools only equal bools, strings strings, numbers numbers (by value)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return float(a) == float(b)


@dataclass(frozen=True, slots=True)
class Filter:
    """A parsed, validated metadata filter (immutable, hashable); build with `Filter.parse`.

    Usable as a pydantic field type: a model validates a plain mapping into a Filter."""

    node: Node
    source: Mapping[str, Any]

    @classmethod
    def parse(cls, obj: object) -> Filter:
        if isinstance(obj, Filter):
            return obj
        node = _Parser().mapping(obj, 0)
        assert isinstance(obj, Mapping)  # mapping() refuses anything else
        return cls(node, copy.deepcopy(obj))

    def matches(self, meta: Mapping[str, MetaValue]) -> bool:
        """The reference semantics every backend is tested against."""
        return matches_node(self.node, meta)

    def __hash__(self) -> int:
        return hash(self.node)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Filter) and other.node == self.node

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls.parse,
            serialization=core_schema.plain_serializer_function_ser_schema(lambda f: f.source),
        )


def parse_filter(obj: object) -> Filter | None:
    """The API edge: None or {} means no filter; anything else must parse."""
    if obj is None or (isinstance(obj, Mapping) and not obj):
        return None
    return Filter.parse(obj)


def scoped(
    filters: object, *, agent_id: str | None = None, run_id: str | None = None
) -> Filter | None:
    """`filters` parsed, with agent_id / run_id equality added (all must hold)."""
    parsed = parse_filter(filters)
    extra: list[Match] = []
    for key, value in (("agent_id", agent_id), ("run_id", run_id)):
        if value is not None:
            if not isinstance(value, str) or not value.strip():
                raise UserInputError(f"{key} must be a non-empty string")
            extra.append(Match(key, (_scalar(key, value),)))
    if not extra:
        return parsed
    parts: list[Node] = [*extra] if parsed is None else [parsed.node, *extra]
    node = parts[0] if len(parts) == 1 else Group("and", tuple(parts))
    conds = {n.key: n.values[0] for n in extra}
    source: Mapping[str, Any] = conds if parsed is None else {"and": [dict(parsed.source), conds]}
    return Filter(node, source)


__all__ = [
    "MAX_CONDITIONS",
    "MAX_DEPTH",
    "MAX_VALUES",
    "OPS",
    "Filter",
    "Group",
    "Match",
    "Node",
    "Range",
    "matches_node",
    "parse_filter",
    "scoped",
]
