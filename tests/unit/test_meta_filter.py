"""Metadata and filters without a store: what metadata may hold, how a filter parses (and which
mistakes name which key), the reference semantics, and the compilers' safety and exactness
(the LanceDB SQL, the Tantivy prefix cover of a range, the dense cache's mask)."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
from hymem.core import metadata as M
from hymem.core.errors import UserInputError
from hymem.core.filters import (
    MAX_CONDITIONS,
    MAX_DEPTH,
    Filter,
    Group,
    Match,
    Range,
    parse_filter,
    scoped,
)
from hymem.indexes.filter_compile import mask, sortable_bounds, to_sql
from pydantic import BaseModel, ValidationError

EVIL = "x' OR '1'='1"
DROP = '"); DROP TABLE summaries; --'


# --- metadata ---------------------------------------------------------------------------------
def test_metadata_is_checked_sorted_and_normalised() -> None:
    meta = M.check_metadata({"b": 1, "a": "x", "c": True, "d": -0.0, "e": 2.5})
    assert list(meta) == ["a", "b", "c", "d", "e"]
    assert math.copysign(1.0, meta["d"]) == 1.0  # type: ignore[arg-type]
    assert M.check_metadata(None) == {}
    assert M.canonical(meta) == '{"a":"x","b":1,"c":true,"d":0.0,"e":2.5}'
    assert M.decode(M.canonical(meta)) == meta and M.decode(None) == {}


@pytest.mark.parametrize(
    ("meta", "names"),
    [
        ({EVIL: 1}, EVIL),
        ({DROP: 1}, "DROP"),
        ({"clé": 1}, "clé"),
        ({"1abc": 1}, "1abc"),
        ({"a b": 1}, "a b"),
        ({"k\x00": 1}, "k"),
        ({"a" * 65: 1}, "aaaa"),
        ({"and": 1}, "reserved"),
        ({"k": None}, "'k'"),
        ({"k": [1]}, "'k'"),
        ({"k": {"x": 1}}, "'k'"),
        ({"k": float("nan")}, "finite"),
        ({"k": float("inf")}, "finite"),
        ({"k": 2**53 + 1}, "2**53"),
        ({"k": "x" * 513}, "512"),
        ({"k": "a\x00b"}, "NUL"),
        ({"k": "\ud800"}, "surrogate"),
        ({f"k{i}": i for i in range(33)}, "32"),
        (["k"], "mapping"),
    ],
)
def test_bad_metadata_is_refused_naming_the_key(meta: Any, names: str) -> None:
    with pytest.raises(UserInputError, match=None) as err:
        M.check_metadata(meta)
    assert names in str(err.value)


def test_scopes_become_keys_and_must_agree_with_metadata() -> None:
    assert M.with_scopes({"k": 1}, agent_id="a", run_id=None) == {"agent_id": "a", "k": 1}
    assert M.with_scopes({"agent_id": "a"}, agent_id="a", run_id="r") == {
        "agent_id": "a",
        "run_id": "r",
    }
    with pytest.raises(UserInputError, match="agent_id"):
        M.with_scopes({"agent_id": "a"}, agent_id="b", run_id=None)
    with pytest.raises(UserInputError, match="run_id"):
        M.with_scopes(None, agent_id=None, run_id="  ")


def test_tokens_are_typed() -> None:
    tokens = {M.eq_token("k", v) for v in ("1", 1, 1.0, True)}
    assert len(tokens) == 3  # 1 and 1.0 are one number; "1" and True differ
    assert M.eq_token("k", 0) == M.eq_token("k", -0.0)
    assert M.numbers({"a": True, "b": 2, "c": "3", "d": 0.5}) == [("b", 2.0), ("d", 0.5)]


# --- parsing ----------------------------------------------------------------------------------
def test_filters_parse_into_a_small_tree() -> None:
    f = Filter.parse(
        {"topic": "travel", "year": {"gte": 2020, "lt": 2024}, "or": [{"a": {"in": [1, 2]}}]}
    )
    assert f.node == Group(
        "and",
        (
            Match("topic", ("travel",)),
            Range("year", 2020.0, True, 2024.0, False),
            Match("a", (1, 2)),
        ),
    )
    assert Filter.parse({"k": {"ne": "x"}}).node == Match("k", ("x",), negate=True)
    assert Filter.parse({"k": {"nin": ["x"]}}).node == Match("k", ("x",), negate=True)
    assert Filter.parse({"or": [{"a": 1}, {"b": 2}]}).node == Group(
        "or", (Match("a", (1,)), Match("b", (2,)))
    )
    assert parse_filter(None) is None and parse_filter({}) is None
    assert Filter.parse(f) is f


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"topic": {"regex": "a.*"}}, "'topic': unknown operator 'regex'"),
        ({"topic": {"$eq": "a"}}, "'topic': unknown operator"),
        ({"topic": {}}, "'topic': no operator"),
        ({"year": {"gt": "2020"}}, "'year': 'gt' needs a number"),
        ({"year": {"lt": True}}, "'year': 'lt' needs a number"),
        ({"year": {"gt": 1, "gte": 2}}, "'year'"),
        ({"year": {"lte": float("nan")}}, "'year'"),
        ({"topic": {"in": []}}, "'topic': 'in' needs at least one value"),
        ({"topic": {"in": "abc"}}, "'topic': 'in' needs a list"),
        ({"topic": {"in": [["a"]]}}, "'topic'"),
        ({"topic": {"nin": list(range(300))}}, "'topic'"),
        ({"topic": ["a", "b"]}, "'topic'"),
        ({"topic": None}, "'topic'"),
        ({"topic": {"eq": {"nested": 1}}}, "'topic'"),
        ({"topic": "a\x00"}, "'topic'"),
        ({EVIL: "a"}, EVIL),
        ({DROP: "a"}, "DROP"),
        ({"ключ": "a"}, "ключ"),
        ({"and": []}, "'and'"),
        ({"or": {"a": 1}}, "'or'"),
        ({"and": [{}]}, "empty"),
        ({"and": ["a"]}, "mapping"),
    ],
)
def test_mistakes_are_user_input_errors_naming_the_filter(raw: Any, named: str) -> None:
    with pytest.raises(UserInputError) as err:
        Filter.parse(raw)
    assert named in str(err.value)


def test_size_and_depth_are_bounded() -> None:
    deep: dict[str, Any] = {"a": 1}
    for _ in range(MAX_DEPTH + 1):
        deep = {"and": [deep]}
    with pytest.raises(UserInputError, match="deeper"):
        Filter.parse(deep)
    with pytest.raises(UserInputError, match="at most"):
        Filter.parse({f"k{i}": i for i in range(MAX_CONDITIONS + 1)})
    with pytest.raises(UserInputError, match="mapping"):
        Filter.parse("topic = 'a'")


def test_a_filter_is_a_pydantic_field_type() -> None:
    class Request(BaseModel):
        filters: Filter | None = None

    req = Request.model_validate({"filters": {"k": {"gt": 1}}})
    assert req.filters is not None and req.filters.matches({"k": 2})
    assert req.model_dump() == {"filters": {"k": {"gt": 1}}}
    with pytest.raises(ValidationError, match="unknown operator"):
        Request.model_validate({"filters": {"k": {"like": "x"}}})


def test_scoped_adds_agent_and_run_equality() -> None:
    f = scoped({"k": 1}, agent_id="a", run_id="r")
    assert f is not None and f.matches({"k": 1, "agent_id": "a", "run_id": "r"})
    assert not f.matches({"k": 1, "agent_id": "a"})
    only = scoped(None, agent_id="a")
    assert only is not None and only.node == Match("agent_id", ("a",))
    assert scoped(None) is None


# --- reference semantics ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "meta", "expected"),
    [
        ({"k": 1}, {"k": 1.0}, True),
        ({"k": 1}, {"k": True}, False),
        ({"k": True}, {"k": 1}, False),
        ({"k": "1"}, {"k": 1}, False),
        ({"k": 1}, {}, False),
        ({"k": {"ne": 1}}, {}, True),
        ({"k": {"ne": 1}}, {"k": "1"}, True),
        ({"k": {"nin": [1, 2]}}, {"k": 2.0}, False),
        ({"k": {"gt": 1}}, {"k": True}, False),
        ({"k": {"gt": 1}}, {"k": "5"}, False),
        ({"k": {"gte": 1, "lte": 1}}, {"k": 1}, True),
        ({"k": {"gt": 1}}, {"k": 1}, False),
        ({"k": {"lt": 0}}, {"k": -0.0}, False),
        ({"or": [{"a": 1}, {"b": 1}]}, {"b": 1}, True),
        ({"and": [{"a": 1}, {"b": 1}]}, {"b": 1}, False),
    ],
)
def test_reference_semantics(raw: dict[str, Any], meta: dict[str, Any], expected: bool) -> None:
    assert Filter.parse(raw).matches(meta) is expected


# --- compilers --------------------------------------------------------------------------------
def test_sql_holds_keys_and_values_only_as_escaped_literals() -> None:
    sql = to_sql(Filter.parse({"topic": EVIL, "note": {"in": [DROP, "it's"]}}))
    assert "'note\x1fs\"); DROP TABLE summaries; --'" in sql
    assert "'topic\x1fsx'' OR ''1''=''1'" in sql and "'it''s'" not in sql
    assert "'note\x1fsit''s'" in sql
    assert sql.count("array_has") == 2
    rng = to_sql(Filter.parse({"year": {"gt": 1e-5, "lte": 2**53}}))
    assert rng == (
        "map_extract(meta_num, 'year')[1] > 1e-05 AND "
        "map_extract(meta_num, 'year')[1] <= 9007199254740992.0"
    )
    neg = to_sql(Filter.parse({"k": {"ne": False}}))
    assert neg == "NOT coalesce(array_has(meta_tokens, 'k\x1fbfalse'), false)"


def test_sortable_keys_keep_the_order_of_numbers() -> None:
    xs = [-1e300, -5.0, -1.0, -5e-324, 0.0, 5e-324, 1e-300, 1.0, 1.5, 2.0**53, 1e300]
    keys = [M.sortable(x) for x in xs]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert M.sortable(-0.0) == M.sortable(0.0)


def _in_cover(x: float, cover: set[str]) -> bool:
    return any(t in cover for t in M.range_tokens("k", x))


def test_range_prefixes_select_exactly_the_numbers_in_range() -> None:
    """A value's prefixes meet a range's cover iff the value lies in the range, for random
    values and ranges around them (bounds open and closed, sides unbounded)."""
    rng = random.Random(7)
    pool = [0.0, 1.0, -1.0, 2.5, 1e-300, -1e300, 2.0**53, 7.0, 7.000000000000001]
    pool += [rng.uniform(-1e6, 1e6) for _ in range(40)] + [
        rng.choice([-1, 1]) * 10 ** rng.uniform(-20, 20) for _ in range(20)
    ]
    for _ in range(150):
        lo, hi = sorted(rng.sample(pool, 2))
        spec: dict[str, float] = {}
        if rng.random() < 0.85:
            spec[rng.choice(["gt", "gte"])] = lo
        if rng.random() < 0.85 or not spec:
            spec[rng.choice(["lt", "lte"])] = hi
        f = Filter.parse({"k": spec})
        node = f.node
        assert isinstance(node, Range)
        cover = set(M.range_cover("k", *sortable_bounds(node)))
        assert len(cover) <= 16 * 2 * 16
        for x in pool:
            assert _in_cover(x, cover) == f.matches({"k": x}), (spec, x)


def test_an_empty_range_covers_nothing() -> None:
    node = Filter.parse({"k": {"gt": 5, "lt": 5}}).node
    assert isinstance(node, Range) and M.range_cover("k", *sortable_bounds(node)) == []
    everything = M.range_cover("k", 0, 2**64 - 1)
    assert len(everything) == 16 and all(len(t) == len("k\x1f#") + 1 for t in everything)


def test_mask_evaluates_each_distinct_dict_once() -> None:
    metas = [{}, {"k": 1}, {"k": 2}]
    ids = np.asarray([0, 1, 2, 1, 0, 2], dtype=np.int32)
    got = mask(Filter.parse({"k": {"gte": 2}}), ids, metas)
    assert got.tolist() == [False, False, True, False, False, True]
    assert mask(Filter.parse({"k": 1}), ids[:0], metas).tolist() == []
    assert mask(Filter.parse({"k": 1}), np.zeros(0, np.int32), []).tolist() == []
