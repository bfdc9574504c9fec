"""Metadata on turns, segments and summaries: what a value may be, and how it is indexed.

Metadata is a flat mapping of keys to `str`, `int`, `float` or `bool` given on `add()` (plus
the `agent_id` / `run_id` scopes, stored as ordinary keys). Keys match `KEY_PATTERN`, a bounded
identifier, so a key can never carry quotes, separators or SQL; values are bounded and checked
(no NUL, no lone surrogate, finite numbers, integers exact as float64). Checking happens once,
at the API edge; everything below trusts the canonical form.

Typed semantics, shared by every backend (`meta_filter.matches` is the reference):
* strings, booleans and numbers never equal one another (`True` is not `1`, `"1"` is not `1`);
* numbers compare by value (`1 == 1.0`), so every number is indexed as its float64 value;
* ranges apply to numbers only.

Three representations, all derived from the one canonical dict:
* `canonical(meta)`: sorted compact JSON, the stored copy that round-trips types exactly;
* `eq_tokens(meta)`: one typed token per key, `key \\x1f tag value` (tag `s`, `n` or `b`), for
  equality and membership (LanceDB `array_has`, Tantivy `term_set_query`, both exact);
* numbers for ranges: a `map<string, double>` column in LanceDB (`map_extract`), and in Tantivy
  the value's hex prefixes of an order-preserving 64-bit key (`range_tokens`), so a range is a
  set of at most a few hundred prefix terms (the trie encoding Lucene used for numeric ranges)
  and no query is ever parsed from text.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Mapping
from typing import Any

from hymem.core.errors import UserInputError
from hymem.core.types import MetaValue

Metadata = dict[str, MetaValue]

KEY_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# Filter combinators: a metadata key by these names could not be filtered on.
RESERVED_KEYS = frozenset({"and", "or"})
SCOPE_KEYS = ("agent_id", "run_id")
MAX_KEYS = 32
MAX_VALUE_CHARS = 512
# Integers beyond 2**53 are not exact as float64, and numbers are indexed as float64.
MAX_EXACT_INT = 2**53
SEP = "\x1f"  # never in a key (KEY_PATTERN), so a token's key part is unambiguous
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_HEX_DIGITS = 16  # a 64-bit key as hex: one prefix per digit, 16 per number


def check_key(key: object, what: str = "metadata") -> str:
    """A key as `KEY_PATTERN` allows it, else UserInputError naming it."""
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise UserInputError(
            f"{what} key {key!r} is not allowed: keys are 1-64 letters, digits or underscores, "
            "not starting with a digit"
        )
    if key in RESERVED_KEYS:
        raise UserInputError(f"{what} key {key!r} is reserved for filter combinators")
    return key


def check_value(key: str, value: object, what: str = "metadata") -> MetaValue:
    """A value as stored: str, bool, int or float, bounded and normalised (-0.0 is 0.0)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) > MAX_EXACT_INT:
            raise UserInputError(f"{what} {key!r}: integers must lie within +-2**53")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UserInputError(f"{what} {key!r}: numbers must be finite")
        return value + 0.0  # -0.0 -> 0.0: they are equal, so they must index alike
    if isinstance(value, str):
        if len(value) > MAX_VALUE_CHARS:
            raise UserInputError(f"{what} {key!r}: strings are limited to {MAX_VALUE_CHARS} chars")
        if "\x00" in value or _SURROGATE.search(value):
            raise UserInputError(f"{what} {key!r}: strings must not hold NUL or lone surrogates")
        return value
    raise UserInputError(
        f"{what} {key!r}: values must be str, int, float or bool, got {type(value).__name__}"
    )


def check_metadata(meta: object) -> Metadata:
    """The caller's metadata, validated, as a new dict sorted by key ({} for None)."""
    if meta is None:
        return {}
    if not isinstance(meta, Mapping):
        raise UserInputError(f"metadata must be a mapping, got {type(meta).__name__}")
    if len(meta) > MAX_KEYS:
        raise UserInputError(f"metadata holds {len(meta)} keys; the limit is {MAX_KEYS}")
    return {check_key(k): check_value(k, meta[k]) for k in sorted(meta, key=str)}


def with_scopes(meta: object, *, agent_id: str | None, run_id: str | None) -> Metadata:
    """`meta` validated, with the agent_id / run_id scopes added as keys (a scope given both
    ways must agree)."""
    out = check_metadata(meta)
    for key, value in zip(SCOPE_KEYS, (agent_id, run_id), strict=True):
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise UserInputError(f"{key} must be a non-empty string")
        checked = check_value(key, value)
        if key in out and out[key] != checked:
            raise UserInputError(f"{key} given as {checked!r} and as metadata {out[key]!r}")
        out[key] = checked
    if len(out) > MAX_KEYS:
        raise UserInputError(f"metadata holds {len(out)} keys; the limit is {MAX_KEYS}")
    return dict(sorted(out.items()))


def canonical(meta: Mapping[str, Any]) -> str:
    """Sorted, compact JSON: the stored form, and a key for "same metadata"."""
    return json.dumps(dict(meta), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def decode(text: str | None) -> Metadata:
    """The stored JSON back as a dict ({} for a row written before metadata existed)."""
    return json.loads(text) if text else {}


def eq_token(key: str, value: MetaValue) -> str:
    """The typed token of one (key, value): equal values, and only those, share it."""
    if isinstance(value, bool):
        return f"{key}{SEP}b{'true' if value else 'false'}"
    if isinstance(value, int | float):
        return f"{key}{SEP}n{float(value) + 0.0!r}"
    return f"{key}{SEP}s{value}"


def eq_tokens(meta: Mapping[str, MetaValue]) -> list[str]:
    return [eq_token(k, v) for k, v in sorted(meta.items())]


def numbers(meta: Mapping[str, MetaValue]) -> list[tuple[str, float]]:
    """The numeric entries (bools excluded) as float64, for range filters."""
    return [
        (k, float(v))
        for k, v in sorted(meta.items())
        if isinstance(v, int | float) and not isinstance(v, bool)
    ]


def sortable(x: float) -> int:
    """An unsigned 64-bit key whose order is the order of the floats (NaN aside)."""
    bits = int.from_bytes(struct.pack(">d", x + 0.0), "big")
    return bits ^ 0xFFFF_FFFF_FFFF_FFFF if bits >> 63 else bits | (1 << 63)


def _prefix(key: str, value: int, digits: int) -> str:
    return f"{key}{SEP}#{value:0{digits}x}"


def range_tokens(key: str, x: float) -> list[str]:
    """Every hex prefix (1 to 16 digits) of the number's sortable key: what Tantivy indexes."""
    full = f"{sortable(x):016x}"
    return [f"{key}{SEP}#{full[:n]}" for n in range(1, _HEX_DIGITS + 1)]


def range_cover(key: str, lo: int, hi: int) -> list[str]:
    """The fewest prefix tokens whose numbers are exactly the sortable keys in [lo, hi]: a
    prefix is emitted where its whole block lies inside, else its 16 children are tried."""
    out: list[str] = []
    if lo > hi:
        return out

    def visit(prefix: int, digits: int) -> None:
        width = 4 * (_HEX_DIGITS - digits)
        start = prefix << width
        end = start + (1 << width) - 1
        if end < lo or start > hi:
            return
        if digits and lo <= start and end <= hi:
            out.append(_prefix(key, prefix, digits))
            return
        for d in range(16):
            visit(prefix * 16 + d, digits + 1)

    visit(0, 0)
    return out


def lexical_tokens(meta: Mapping[str, MetaValue]) -> list[str]:
    """What the Tantivy `meta` field holds: equality tokens plus numbers' range prefixes."""
    tokens = eq_tokens(meta)
    for key, x in numbers(meta):
        tokens.extend(range_tokens(key, x))
    return tokens


__all__ = [
    "KEY_PATTERN",
    "MAX_EXACT_INT",
    "MAX_KEYS",
    "MAX_VALUE_CHARS",
    "RESERVED_KEYS",
    "SCOPE_KEYS",
    "Metadata",
    "canonical",
    "check_key",
    "check_metadata",
    "check_value",
    "decode",
    "eq_token",
    "eq_tokens",
    "lexical_tokens",
    "numbers",
    "range_cover",
    "range_tokens",
    "sortable",
    "with_scopes",
]
