"""Update-queue building: direction, ties, floor, k/n limits, blockwise equivalence."""

from __future__ import annotations

import numpy as np
import pytest
from hymem.sleep.queues import build_update_queues, temporal_ranks


def _brute(v: np.ndarray, ranks: np.ndarray, k: int, n: int, floor: float) -> list[list[int]]:
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    out = []
    for i in range(len(v)):
        cands = [(float(v[i] @ v[j]), ranks[j], j) for j in range(len(v)) if ranks[j] > ranks[i]]
        cands.sort(key=lambda c: (-c[0], c[1]))
        out.append([j for s, _, j in cands[:k] if s >= floor][:n])
    return out


def test_only_later_items_and_each_pair_once() -> None:
    v = np.ones((4, 3), dtype=np.float32)  # all identical: every pair qualifies
    ranks = np.array([2, 0, 3, 1])
    q = build_update_queues(v, ranks, top_k=20, keep_n=10, floor=0.5)
    assert [j for j, _ in q.queue(1)] == [3, 0, 2]  # rank 0 sees ranks 1, 2, 3 (ties: older first)
    assert [j for j, _ in q.queue(2)] == []  # the newest has nothing to learn from
    pairs = {(i, j) for i in range(4) for j, _ in q.queue(i)}
    assert len(pairs) == 6 and not any((j, i) in pairs for i, j in pairs)
    assert q.cost.queues == 3 and q.cost.entries == 6


def test_temporal_ranks_orders_ties_by_creation() -> None:
    keys = [(5, 2), (5, 1), (1, 9)]
    assert temporal_ranks(keys).tolist() == [2, 1, 0]


def test_floor_and_limits() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(size=8)
    near = np.stack([base + 0.05 * rng.normal(size=8) for _ in range(6)])
    far = rng.normal(size=(3, 8)) * 5
    v = np.concatenate([near, far]).astype(np.float32)
    ranks = np.arange(len(v))
    q = build_update_queues(v, ranks, top_k=3, keep_n=2, floor=0.9)
    assert all(len(q.queue(i)) <= 2 for i in range(len(v)))
    assert [j for j, _ in q.queue(0)] and all(j < 6 for j, _ in q.queue(0))
    assert all(s >= 0.9 for i in range(len(v)) for _, s in q.queue(i))
    sims = [s for _, s in q.queue(0)]
    assert sims == sorted(sims, reverse=True)


@pytest.mark.parametrize("block_bytes", [4, 4 * 37 * 5, 1 << 26])
@pytest.mark.parametrize("floor", [-1.0, 0.2])
@pytest.mark.parametrize("n_items", [37, 150])  # 150 with floor -1 takes the dense path
def test_blockwise_matches_brute_force(block_bytes: int, floor: float, n_items: int) -> None:
    rng = np.random.default_rng(1)
    v = rng.normal(size=(n_items, 6)).astype(np.float32)
    ranks = rng.permutation(n_items)
    q = build_update_queues(v, ranks, top_k=5, keep_n=2, floor=floor, block_bytes=block_bytes)
    got = [[j for j, _ in q.queue(i)] for i in range(n_items)]
    assert got == _brute(v, ranks, 5, 2, floor)
    if block_bytes == 4:
        assert q.cost.blocks == n_items - 1  # one row per block; the last row has no later items


def test_edge_sizes_and_bad_input() -> None:
    assert len(build_update_queues(np.zeros((0, 4)), np.array([], dtype=int))) == 0
    one = build_update_queues(np.ones((1, 4)), np.array([0]))
    assert one.queue(0) == []
    zero = build_update_queues(np.zeros((2, 4)), np.array([0, 1]), floor=0.5)
    assert zero.queue(0) == []  # zero vectors are similar to nothing
    with pytest.raises(ValueError):
        build_update_queues(np.ones((2, 4)), np.array([0, 0]))
    with pytest.raises(ValueError):
        build_update_queues(np.ones((2, 4)), np.array([0, 1]), top_k=0)


def test_ties_at_the_cut_go_to_older_candidates_in_the_dense_path() -> None:
    v = np.ones((150, 4), dtype=np.float32)  # every pair ties at 1.0; floor -1 takes the dense path
    ranks = np.random.default_rng(2).permutation(150)
    q = build_update_queues(v, ranks, top_k=3, keep_n=3, floor=-1.0)
    by_rank = np.argsort(ranks)
    for i in range(150):
        r = ranks[i]
        assert [j for j, _ in q.queue(i)] == by_rank[r + 1 : r + 4].tolist()
