"""The peers benchmark's pure parts: the token-budget cut, how hits are credited with turns,
the order systems alternate in, ratio formatting and the targets' verdicts. No venv, no model."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

PEERS = Path(__file__).resolve().parents[2] / "benchmarks" / "peers"


@pytest.fixture(scope="module")
def mods() -> dict[str, ModuleType]:
    sys.path.insert(0, str(PEERS))
    try:
        import report
        import systems
        import workload
    finally:
        sys.path.remove(str(PEERS))
    return {"workload": workload, "report": report, "systems": systems}


def test_budget_cut_keeps_the_longest_prefix_that_fits(mods: dict[str, ModuleType]) -> None:
    w = mods["workload"]
    hits = [w.Hit("a", ("t1",)), w.Hit("b", ("t2",)), w.Hit("c", ("t3",))]
    evidence = frozenset({"t2", "t3"})
    assert w.recall_at_budget(evidence, hits, [100, 200, 150], 300) == (0.5, 300)
    # a cheaper unit further down is never pulled up past one that does not fit
    assert w.recall_at_budget(evidence, hits, [100, 250, 10], 300) == (0.0, 100)
    # the first unit alone over the budget: nothing is taken
    assert w.recall_at_budget(evidence, hits, [500, 1, 1], 300) == (0.0, 0)


def test_a_hit_is_credited_with_the_turns_it_stands_for(mods: dict[str, ModuleType]) -> None:
    w = mods["workload"]
    summary = w.Hit("Caroline went to a support group.", ("D1:3", "D1:4"))
    turn = w.Hit("Melanie: nice!", ("D1:5",))
    repeat = w.Hit("Caroline joined the group.", ("D1:4",))
    evidence = frozenset({"D1:4", "D1:5", "D2:1"})
    assert w.covered([summary, turn, repeat]) == ["D1:3", "D1:4", "D1:5"]
    assert w.recall_at_k(evidence, [summary, turn, repeat], 1) == pytest.approx(1 / 3)
    assert w.recall_at_k(evidence, [summary, turn, repeat], 10) == pytest.approx(2 / 3)
    assert w.recall_at_k(frozenset(), [summary], 10) is None


def test_systems_alternate_so_none_is_always_first(mods: dict[str, ModuleType]) -> None:
    w = mods["workload"]
    rounds = [w.rotation(["a", "b", "c"], n) for n in range(4)]
    assert rounds == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]
    assert w.rotation([], 3) == []


def test_ratio_formatting(mods: dict[str, ModuleType]) -> None:
    w, r = mods["workload"], mods["report"]
    assert w.ratio(30.0, 12.0) == "2.50x"
    assert w.ratio(1.0, 0.0) == "-"
    assert w.ratio(math.nan, 1.0) == "-"
    assert r.cell(12.345, 10.0, ".1f", is_reference=False) == "12.3 (1.23x)"
    assert r.cell(10.0, 10.0, ".1f", is_reference=True) == "10.0"
    assert r.cell(math.nan, 10.0, ".1f", is_reference=False) == "-"


def test_percentile_matches_numpy_default(mods: dict[str, ModuleType]) -> None:
    w = mods["workload"]
    assert w.percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert w.percentile([10.0, 20.0], 95) == pytest.approx(19.5)
    assert math.isnan(w.percentile([], 50))


def test_truncation_keeps_the_head_and_the_evidence(mods: dict[str, ModuleType]) -> None:
    w = mods["workload"]

    def session(n: int) -> object:
        turns = tuple(w.Turn(f"D{n}:{i}", "A", "user", f"text {i}") for i in range(1, 5))
        return w.Session(f"s{n}", f"2023-01-0{n}T00:00:00", turns)

    history = w.History("locomo", "u", tuple(session(n) for n in range(1, 5)))
    late = w.Question("locomo", "u", "q2", frozenset({"D4:4"}), "multi-hop")
    cut, asked = w.truncate([history], [late], 3)
    # the head's 3 turns, then nothing until the session holding evidence, kept whole
    assert [(s.id, len(s.turns)) for s in cut[0].sessions] == [("s1", 3), ("s4", 4)]
    assert asked == [late]
    early = w.Question("locomo", "u", "q1", frozenset({"D1:2"}), "single-hop")
    lost = w.Question("locomo", "other", "q3", frozenset({"D9:9"}), "temporal")
    assert w.truncate([history], [lost], 3)[1] == []
    assert w.truncate([history], [early, late], None) == ([history], [early, late])
    assert [len(s.turns) for s in w.truncate([history], [early], 3)[0][0].sessions] == [4, 3]


def test_per_user_keeps_each_users_first_questions(mods: dict[str, ModuleType]) -> None:
    w = mods["workload"]
    qs = [w.Question("locomo", u, f"q{i}", frozenset({"D1:1"}), "x") for i, u in enumerate("aabab")]
    assert [q.text for q in w.per_user(qs, 1)] == ["q0", "q2"]
    assert w.per_user(qs, None) == qs


def test_pick_puts_hymem_first_and_keeps_peer_twins_out_of_search(
    mods: dict[str, ModuleType],
) -> None:
    s = mods["systems"]
    names = [x.name for x in s.pick(["chroma", "hymem-1turn", "chroma-1turn"])]
    assert names == ["hymem", "chroma", "hymem-1turn", "chroma-1turn"]
    assert not s.SYSTEMS["chroma-1turn"].searched and s.SYSTEMS["hymem-1turn"].searched
    with pytest.raises(ValueError, match="unknown"):
        s.pick(["zep"])


def _figs(hymem_rb: float, peer_rb: float, hymem_p95: float, peer_p95: float) -> dict:
    base = {f"{k}_{d}": math.nan for k in ("ingest", "rb") for d in ("locomo", "longmemeval")}
    hymem = {**base, "rb_locomo": hymem_rb, "scale_p95": hymem_p95, "ingest_locomo": 50.0}
    peer = {**base, "rb_locomo": peer_rb, "scale_p95": peer_p95, "ingest_locomo": 40.0}
    return {"hymem": hymem, "mem0": peer}


def test_targets_say_met_or_missed(mods: dict[str, ModuleType]) -> None:
    r = mods["report"]
    met = r.targets(_figs(0.8, 0.6, 24.0, 20.0), 400)
    assert any("LoCoMo" in t and t.endswith("met") for t in met)
    assert any("p95" in t and t.endswith("met") for t in met)  # 24 <= 1.2 x 20
    assert any("ingest LoCoMo" in t and t.endswith("met") for t in met)
    missed = r.targets(_figs(0.6, 0.6, 25.0, 20.0), 400)
    assert sum(t.endswith("MISSED") for t in missed) == 2  # a tie is not ahead
