"""The in-memory exact dense index: same answers as brute force under every filter, kept fresh
by upserts, bounded by its budget, and never keeping a load that raced with a commit."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from hymem.core.time import micros
from hymem.indexes.dense.cache import (
    NO_STATUS,
    Columns,
    DenseCache,
    SummaryLink,
    new_entry,
    unit_rows,
)
from hymem.indexes.dense.scan import hit_rows, top_k

from tests.dense_columns import ACTIVE, SUPERSEDED, T0, cols


def brute(c: Columns, q: np.ndarray, k: int, keep: np.ndarray) -> list[str]:
    sims = unit_rows(c.vectors) @ (q / np.linalg.norm(q))
    order = sorted((i for i in range(len(c.ids)) if keep[i]), key=lambda i: (-sims[i], i))
    return [c.ids[i] for i in order[:k]]


def test_top_k_matches_brute_force_with_distances() -> None:
    c = cols(500, seed=1)
    entry = new_entry(c, None)
    q = np.random.default_rng(9).standard_normal(8).astype(np.float32) * 3.0
    got = top_k(entry, q, 10, None, None)
    assert [i for i, _ in got] == brute(c, q, 10, np.ones(500, bool))
    sims = unit_rows(c.vectors) @ (q / np.linalg.norm(q))
    assert [d for _, d in got] == pytest.approx([1.0 - sims[int(i[1:])] for i, _ in got], abs=1e-5)


def test_status_and_time_filters_follow_the_sql_semantics() -> None:
    n = 60
    status = np.where(np.arange(n) % 3 == 0, SUPERSEDED, ACTIVE).astype(np.int8)
    dated = np.arange(n) % 5 != 0  # every fifth row undated: never in a bounded range
    c = cols(n, seed=2, status=status, dated=dated)
    entry = new_entry(c, None)
    q = np.ones(8, dtype=np.float32)
    since, until = T0 + timedelta(days=10), T0 + timedelta(days=40)
    keep = (status == ACTIVE) & dated & (np.arange(n) >= 10) & (np.arange(n) <= 40)
    got = top_k(entry, q, 100, ["active"], (since, until))
    assert [i for i, _ in got] == brute(c, q, 100, keep)
    open_ended = top_k(entry, q, 100, None, (since, None))
    assert [i for i, _ in open_ended] == brute(c, q, 100, dated & (np.arange(n) >= 10))
    assert top_k(entry, q, 5, [], None) == []
    assert top_k(entry, q, 0, None, None) == []


def test_a_span_overlapping_the_range_matches() -> None:
    lo = np.asarray([micros(T0)], dtype=np.int64)
    hi = np.asarray([micros(T0 + timedelta(days=30))], dtype=np.int64)
    entry = new_entry(cols(1, lo=lo, hi=hi), None)
    q = np.ones(8, dtype=np.float32)
    inside = (T0 + timedelta(days=10), T0 + timedelta(days=11))
    after = (T0 + timedelta(days=31), None)
    assert len(top_k(entry, q, 1, None, inside)) == 1
    assert top_k(entry, q, 1, None, after) == []


def test_upsert_replaces_known_ids_and_appends_new_ones() -> None:
    cache = DenseCache(budget_bytes=1 << 30, dim=8)
    base = cols(3, seed=3)
    cache.load("summaries", "u", lambda: (base, None))
    target = np.zeros((1, 8), dtype=np.float32)
    target[0, 0] = 1.0
    cache.upsert("summaries", "u", cols(1, prefix="r", vectors=target), None)  # replaces r0
    cache.upsert("summaries", "u", cols(40, seed=4, prefix="new"), None)  # grows the arrays
    entry = cache.get("summaries", "u")
    assert entry is not None and entry.n == 43 and entry.ids[:3] == ["r0", "r1", "r2"]
    assert top_k(entry, target[0], 1, None, None) == [("r0", pytest.approx(0.0, abs=1e-6))]
    assert cache.get("summaries", "other") is None


def test_status_less_rows_pass_a_status_filter_only_when_none_is_given() -> None:
    entry = new_entry(cols(4, status=np.full(4, NO_STATUS, dtype=np.int8)), None)
    q = np.ones(8, dtype=np.float32)
    assert len(top_k(entry, q, 4, None, None)) == 4
    assert top_k(entry, q, 4, ["active"], None) == []


def test_budget_evicts_least_recently_searched_and_refuses_oversized_users() -> None:
    per_user = new_entry(cols(100), None).nbytes
    cache = DenseCache(budget_bytes=int(per_user * 2.5), dim=8)
    for user in ("a", "b", "c"):
        cache.load("summaries", user, lambda: (cols(100), None))
        cache.get("summaries", "a")  # a stays the most recently searched
    assert cache.get("summaries", "b") is None  # evicted
    assert cache.get("summaries", "a") is not None and cache.get("summaries", "c") is not None
    assert cache.nbytes() <= cache.budget_bytes
    assert cache.fits(100) and not cache.fits(1000)
    assert not DenseCache(0, 8).enabled


def test_a_load_that_raced_with_a_commit_is_not_kept() -> None:
    cache = DenseCache(budget_bytes=1 << 30, dim=8)

    def loader() -> tuple[Columns, int | None]:
        # the writer commits (and tells the cache) while this load's read is in flight
        cache.upsert("summaries", "u", cols(1, prefix="late"), None)
        return cols(3), None

    served = cache.load("summaries", "u", loader)
    assert served.n == 3  # this query is served from what it read
    assert cache.get("summaries", "u") is None  # but the next one reloads


def test_invalidate_drops_only_that_user_and_tables() -> None:
    cache = DenseCache(budget_bytes=1 << 30, dim=8)
    for table in ("summaries", "segments"):
        for user in ("u", "v"):
            cache.load(table, user, lambda: (cols(5), None))
    cache.invalidate("u", ["summaries"])
    assert cache.get("summaries", "u") is None and cache.get("segments", "u") is not None
    cache.invalidate("v")
    assert cache.get("summaries", "v") is None and cache.get("segments", "v") is None


def test_version_mismatch_reads_as_a_miss() -> None:
    cache = DenseCache(budget_bytes=1 << 30, dim=8)
    cache.load("summaries", "u", lambda: (cols(2), 7))
    assert cache.get("summaries", "u", 7) is not None
    assert cache.get("summaries", "u", 8) is None


def test_hit_rows_follow_upserts_and_leave_unknown_ids_out() -> None:
    cache = DenseCache(budget_bytes=1 << 30, dim=8)
    undated = np.asarray([True, False, True])
    cache.load("summaries", "u", lambda: (cols(3, dated=undated), None))
    link = SummaryLink("segX", ("t7", "t8"), "model")
    cache.upsert("summaries", "u", cols(1, text=["rewritten"], link=[link]), None)  # r0
    cache.upsert("summaries", "u", cols(20, prefix="new"), None)  # grows the arrays
    entry = cache.get("summaries", "u")
    assert entry is not None
    rows = hit_rows(entry, "u", ["r0", "r1", "new19", "gone"], summary=True)
    assert set(rows) == {"r0", "r1", "new19"}
    assert rows["r0"] == {
        "id": "r0",
        "user_id": "u",
        "text": "rewritten",
        "segment_id": "segX",
        "source_turn_ids": ["t7", "t8"],
        "attribution": "model",
        "status": "active",
        "time_start": T0,
        "time_end": T0,
        "metadata": {},
        "memory_id": "r0",  # issue 30: a first version is its own memory
        "valid_from": None,
        "valid_to": None,
    }
    assert rows["r1"]["time_start"] is None and rows["r1"]["time_end"] is None
    assert rows["new19"]["time_start"] == T0 + timedelta(days=19)
    segment = hit_rows(new_entry(cols(1, link=[["t1", "t2"]]), None), "u", ["r0"], summary=False)
    assert segment["r0"]["turn_ids"] == ["t1", "t2"] and "status" not in segment["r0"]
    assert entry.nbytes > entry.mat.nbytes  # text counts against the budget
