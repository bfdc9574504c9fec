"""Approximate (IVF) update queues: agreement with the exact ones, direction, order, ties, edges,
determinism, and which method "auto" picks."""

from __future__ import annotations

import numpy as np
import pytest
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.sleep.consolidator import Consolidator
from hymem.sleep.decide import build_snapshot
from hymem.sleep.ivf import assign, scan_ivf, spherical_kmeans
from hymem.sleep.journal import SleepJournal
from hymem.sleep.queues import UpdateQueues, build_update_queues, queue_agreement

from tests.doubles import ScriptedRoles
from tests.fixtures_sleep import summary, summary_store


def _clustered(n: int, dim: int, seed: int = 0) -> np.ndarray:
    """Clusters of about 5 near-duplicates (cosine ~0.8), like benchmarks/sleep.py."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, n // 5), dim), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    v = centres[rng.integers(0, len(centres), n)]
    return v + rng.standard_normal((n, dim), dtype=np.float32) * (0.5 / np.sqrt(dim))


def _pairs(q: UpdateQueues) -> set[tuple[int, int]]:
    return {(i, int(j)) for i in range(len(q)) for j in q.queue_indices(i)}


def _agreement(approx: UpdateQueues, exact: UpdateQueues) -> float:
    want = _pairs(exact)
    return len(want & _pairs(approx)) / len(want)


@pytest.mark.parametrize(
    ("data", "floor"),
    [("clustered", 0.6), ("uniform", -1.0), ("uniform", 0.0)],
)
def test_ivf_agrees_with_exact(data: str, floor: float) -> None:
    n = 4000
    if data == "clustered":
        v = _clustered(n, 384)
    else:  # low-dimensional: in high dimensions uniform data has no neighbourhoods to find
        v = np.random.default_rng(3).standard_normal((n, 8)).astype(np.float32)
    ranks = np.random.default_rng(4).permutation(n)
    exact = build_update_queues(v, ranks, floor=floor, method="exact")
    approx = build_update_queues(v, ranks, floor=floor, exact_below=1000)  # auto, lowered
    assert approx.cost.method == "ivf" and exact.cost.method == "exact"
    assert approx.cost.similarities < exact.cost.similarities / 2
    full = _agreement(approx, exact)
    assert full >= 0.95
    sampled = queue_agreement(approx, v, ranks, floor=floor, sample=500)
    assert sampled >= 0.95 and abs(sampled - full) < 0.03


def test_ivf_entries_are_later_above_the_floor_and_in_order() -> None:
    n = 3000
    v = _clustered(n, 64, seed=5)
    ranks = np.random.default_rng(6).permutation(n)
    q = build_update_queues(v, ranks, top_k=6, keep_n=3, floor=0.5, method="ivf")
    unit = v / np.linalg.norm(v, axis=1, keepdims=True)
    assert q.cost.entries > n // 2
    for i in range(n):
        queue = q.queue(i)
        assert len(queue) <= 3
        for j, s in queue:
            assert ranks[j] > ranks[i]  # only later items, never the item itself
            assert s >= 0.5 and s == pytest.approx(float(unit[i] @ unit[j]), abs=1e-5)
        keys = [(-s, ranks[j]) for j, s in queue]
        assert keys == sorted(keys)  # most similar first, ties: the older first


def test_ivf_ties_go_to_older_candidates() -> None:
    n = 400
    v = np.ones((n, 4), dtype=np.float32)  # every pair ties at 1.0
    ranks = np.random.default_rng(2).permutation(n)
    q = build_update_queues(v, ranks, top_k=3, keep_n=3, floor=0.5, method="ivf")
    by_rank = np.argsort(ranks)
    for i in range(n):
        assert q.queue_indices(i).tolist() == by_rank[ranks[i] + 1 : ranks[i] + 4].tolist()


def test_ivf_is_deterministic_per_seed() -> None:
    v = _clustered(3000, 32, seed=7)
    ranks = np.arange(3000)
    a, b = (build_update_queues(v, ranks, floor=0.5, method="ivf", seed=3) for _ in range(2))
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.sims, b.sims)


@pytest.mark.parametrize("method", ["ivf", "auto"])
def test_ivf_edges_and_bad_input(method: str) -> None:
    kw = {"method": method, "exact_below": 0}
    empty = build_update_queues(np.zeros((0, 4)), np.array([], dtype=int), **kw)
    assert len(empty) == 0 and empty.cost.entries == 0
    assert build_update_queues(np.ones((1, 4)), np.array([0]), **kw).queue(0) == []
    few = build_update_queues(np.eye(3, 4) + 1, np.array([2, 0, 1]), floor=0.1, **kw)
    assert few.queue_indices(1).tolist() == [2, 0] and few.queue(0) == []
    with pytest.raises(ValueError):
        build_update_queues(np.ones((2, 4)), np.array([0, 0]), **kw)
    with pytest.raises(ValueError):
        build_update_queues(np.ones((3, 4)), np.array([0, 1]), **kw)
    with pytest.raises(ValueError):
        build_update_queues(np.ones((2, 4)), np.array([0, 1]), nprobe=0, **kw)


def test_auto_picks_exact_below_the_threshold_and_rejects_unknown_methods() -> None:
    v = _clustered(500, 16)
    ranks = np.arange(500)
    assert build_update_queues(v, ranks).cost.method == "exact"
    assert build_update_queues(v, ranks, exact_below=100).cost.method == "ivf"
    with pytest.raises(ValueError):
        build_update_queues(v, ranks, method="faiss")


def test_agreement_of_exact_is_one_and_of_empty_queues_zero() -> None:
    v = _clustered(800, 16, seed=8)
    ranks = np.random.default_rng(9).permutation(800)
    exact = build_update_queues(v, ranks, floor=0.5, method="exact")
    assert queue_agreement(exact, v, ranks, floor=0.5, sample=200) == 1.0
    nothing = build_update_queues(v, ranks, floor=1.5, method="exact")
    assert queue_agreement(nothing, v, ranks, floor=0.5, sample=200) == 0.0
    assert queue_agreement(nothing, v, ranks, floor=1.5, sample=200) == 1.0  # nothing to find


@pytest.mark.parametrize(("exact_below", "method"), [(20_000, "exact"), (0, "ivf")])
def test_a_sleep_snapshot_follows_the_configured_threshold(exact_below: int, method: str) -> None:
    vectors = _clustered(60, 256, seed=10)
    records = [
        summary(f"s{i}", f"fact {i}", day=i % 7, created=i, vector=vectors[i].tolist())
        for i in range(60)
    ]
    config = MemoryConfig.defaults(sleep_exact_below=exact_below, sleep_similarity_floor=0.5)
    snap = build_snapshot(summary_store(records), "u1", config)
    assert snap.cost.method == method and snap.cost.items == 60 and snap.cost.entries > 0


def test_every_later_neighbour_in_a_probed_cell_is_found() -> None:
    n, eff, floor = 2000, 3, 0.5
    vs = _clustered(n, 32, seed=11)
    vs /= np.linalg.norm(vs, axis=1, keepdims=True)  # in temporal order: position = index
    scan = scan_ivf(vs, eff, floor, 1 << 20, nprobe=2, tables=1, seed=5)
    k = round(np.sqrt(n))
    _, probes = assign(vs, spherical_kmeans(vs, k, np.random.default_rng([5, 0])), 2, 1 << 20)
    cell = probes[:, 0]
    found: dict[int, dict[int, float]] = {}
    for r, c, s in zip(scan.rows, scan.cols, scan.sims, strict=True):
        found.setdefault(int(r), {})[int(c)] = float(s)
    sims = vs @ vs.T
    for i in range(n):
        mine = found.get(i, {})
        assert len(mine) <= eff and all(j > i for j in mine)
        for j in np.nonzero(sims[i, i + 1 :] >= floor)[0] + i + 1:
            if cell[j] in probes[i] and int(j) not in mine:
                # only a full queue of better (or equal, older) candidates may leave it out
                assert len(mine) == eff and min(mine.values()) >= sims[i, j] - 1e-6


def test_a_sleep_reports_how_many_users_got_approximate_queues() -> None:
    vectors = _clustered(40, 256, seed=12)
    records = [
        summary(f"{u}-s{i}", f"fact {i}", user_id=u, day=i, created=i, vector=vectors[i].tolist())
        for u in ("u1", "u2")
        for i in range(20 if u == "u1" else 5)
    ]
    config = MemoryConfig.defaults(sleep_exact_below=10, sleep_similarity_floor=0.5)
    store = summary_store(records)
    roles = ScriptedRoles()
    cons = Consolidator(store, HashingEmbedder(), lambda: roles, config, journal=SleepJournal(None))
    report = cons.sleep(dry_run=True)
    assert report.approximate_queue_users == 1  # u1 (20 summaries), not u2 (5)
