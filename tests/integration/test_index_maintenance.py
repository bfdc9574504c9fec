"""The vector index is kept fresh on the store's `hymem-index-*` thread, never in a user's call:
built past `vector_index_min_rows`, retrained once the table outgrows it, without losing writes
made while it trains, and joined by close()."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hymem.core.time import utcnow
from hymem.core.types import StatusChange, SummaryRecord, SummaryStatus
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import upkeep
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.maintenance import OPTIMIZE_EVERY, STATE_FILE
from hymem.indexes.store.store import Store

from tests.fixtures_store import DIM, make_segment, make_summary, make_turns
from tests.log_events import capture_events

pytestmark = pytest.mark.integration

MIN_ROWS = 256  # the smallest threshold the config allows (PQ trains 256 centroids)
WAIT_S = 60.0


class Rows:
    """Commits batches of summaries with random unit vectors, one segment per batch."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = np.random.default_rng(seed)
        self.vectors: dict[str, np.ndarray] = {}
        self.records: dict[str, SummaryRecord] = {}
        self.batches = 0

    def commit(self, store: Store, n: int, user: str = "u") -> list[str]:
        seg_id = f"g{self.batches}"
        self.batches += 1
        vecs = self.rng.standard_normal((n, DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        summaries = [
            make_summary(user, f"{seg_id}-s{i}", f"note {seg_id} {i}", segment_id=seg_id, vector=v)
            for i, v in enumerate(vecs.tolist())
        ]
        store.commit_segments(user, [make_segment(user, seg_id)], summaries, [])
        self.vectors.update({s.id: vecs[i] for i, s in enumerate(summaries)})
        self.records.update({s.id: s for s in summaries})
        return [s.id for s in summaries]


@pytest.fixture
def store(make_store: Callable[..., Store]) -> Store:
    return make_store(vector_index_min_rows=MIN_ROWS, dense_cache_bytes=0)


def wait_idle(store: Store) -> None:
    assert store._compactor.wait_idle(WAIT_S), "index maintainer still busy"
    assert store._compactor.worker.last_error is None


def trained_rows(folder: Path, table: str = S.SUMMARIES) -> int:
    return int(json.loads((folder / STATE_FILE).read_text())[table]["trained_rows"])


def index_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("hymem-index")]


class Builds:
    """Wraps one store's IVF_PQ build: records each build's thread, and holds builds until
    `gate` is set (it is, unless a test clears it); `started`/`finished` mark the first one."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.threads: list[str] = []
        self.gate = threading.Event()
        self.started = threading.Event()
        self.finished = threading.Event()
        self.gate.set()
        self._tables = store.tables
        self._real = upkeep.build_vector_index  # another store's wrapper, or the function
        monkeypatch.setattr(upkeep, "build_vector_index", self._build)

    def _build(self, lance: LanceTables, table: str) -> tuple[int, int]:
        if lance is not self._tables:
            return self._real(lance, table)
        self.threads.append(threading.current_thread().name)
        self.started.set()
        assert self.gate.wait(WAIT_S)
        try:
            return self._real(lance, table)
        finally:
            self.finished.set()


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Store], Builds]]:
    made: list[Builds] = []

    def _watch(store: Store) -> Builds:
        made.append(Builds(store, monkeypatch))
        return made[-1]

    yield _watch
    for builds in made:  # never leave a maintainer blocked for the fixture's close()
        builds.gate.set()


def test_commit_crossing_the_threshold_returns_before_the_index_is_built(
    store: Store, watch: Callable[[Store], Builds]
) -> None:
    builds = watch(store)
    rows = Rows()
    rows.commit(store, 200)
    builds.gate.clear()
    rows.commit(store, 200)  # crosses MIN_ROWS: returns while the build is held
    assert builds.started.wait(WAIT_S)
    assert not store.tables.vector_indexed(S.SUMMARIES)
    query = rows.vectors["g1-s3"].tolist()
    assert store.dense_search(RowScope("u"), query, 1)[0][0] == "g1-s3"  # flat search meanwhile
    builds.gate.set()
    wait_idle(store)
    assert store.tables.vector_indexed(S.SUMMARIES)
    assert builds.threads and all(n.startswith("hymem-index-") for n in builds.threads)


def test_background_index_is_used_and_recall_stays_high(store: Store) -> None:
    rows = Rows()
    for _ in range(4):
        rows.commit(store, 150)
    wait_idle(store)
    assert store.tables.vector_indexed(S.SUMMARIES)
    ids = list(rows.vectors)
    matrix = np.stack([rows.vectors[i] for i in ids])
    recalls = []
    for q in rows.rng.standard_normal((20, DIM)).astype(np.float32):
        q /= np.linalg.norm(q)
        exact = {ids[j] for j in np.argsort(-(matrix @ q))[:10]}
        found = {i for i, _ in store.dense_search(RowScope("u"), q.tolist(), 10)}
        recalls.append(len(exact & found) / 10)
    assert float(np.mean(recalls)) >= 0.9


def test_drifted_index_is_retrained_and_remembered_across_reopen(
    make_store: Callable[..., Store], tmp_path: Path
) -> None:
    store = make_store("m", vector_index_min_rows=MIN_ROWS, dense_cache_bytes=0)
    rows = Rows()
    rows.commit(store, 300)
    wait_idle(store)
    assert trained_rows(tmp_path / "m") == 300
    rows.commit(store, 200)  # 500 <= 2 x 300: no retrain
    wait_idle(store)
    assert trained_rows(tmp_path / "m") == 300
    rows.commit(store, 200)  # 700 > 600: retrained on every row
    wait_idle(store)
    assert trained_rows(tmp_path / "m") == 700
    assert store.tables.vector_index_rows(S.SUMMARIES) == 700
    store.close()
    with capture_events() as events:
        again = make_store("m", vector_index_min_rows=MIN_ROWS, dense_cache_bytes=0)
    assert "store.lexical_rebuild" not in {e["event"] for e in events}  # sync was renewed
    assert again._compactor._state.trained_rows(S.SUMMARIES) == 700
    rows.commit(again, 100)  # 800 <= 1400: the remembered count keeps it from retraining
    wait_idle(again)
    assert trained_rows(tmp_path / "m") == 700


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_lost_state_file_counts_the_rows_the_index_covers(
    make_store: Callable[..., Store], tmp_path: Path, damage: str
) -> None:
    store = make_store("m", vector_index_min_rows=MIN_ROWS, dense_cache_bytes=0)
    rows = Rows()
    rows.commit(store, 300)
    wait_idle(store)
    rows.commit(store, 100)
    store.optimize()  # folds the 100 new rows into the index: it now covers 400
    store.close()
    state = tmp_path / "m" / STATE_FILE
    if damage == "missing":
        state.unlink()
    else:
        state.write_text("{not json")
    again = make_store("m", vector_index_min_rows=MIN_ROWS, dense_cache_bytes=0)
    rows.commit(again, 100)
    wait_idle(again)
    assert trained_rows(tmp_path / "m") == 400  # recorded at once, so compaction cannot move it
    rows.commit(again, 350)  # 850 > 800
    wait_idle(again)
    assert trained_rows(tmp_path / "m") == 850


def test_writes_during_a_background_build_lose_nothing(
    make_store: Callable[..., Store], watch: Callable[[Store], Builds]
) -> None:
    store = make_store("big", vector_index_min_rows=5000, dense_cache_bytes=0)
    builds = watch(store)
    rows = Rows()
    rows.commit(store, 2500)
    builds.gate.clear()  # the first writes land while the build is under way, whatever the load
    first = rows.commit(store, 2500)  # crosses 5000: the build starts in the background
    assert builds.started.wait(WAIT_S)
    during = overlapped = 0
    while (not builds.finished.is_set() or during < 3) and during < 200:
        if during == 3:
            builds.gate.set()  # then the real training runs beside the writes that follow
        rows.commit(store, 5)  # an append
        rewritten = rows.records[first[100 + during]].model_copy(update={"text": f"new {during}"})
        retire = StatusChange(summary_id=first[during], status=SummaryStatus.DELETED)
        # a delete + append of the rewritten version, and a merge_insert of the status change
        store.apply_summary_changes("u", [rewritten], [retire])
        during += 1
        overlapped += not builds.finished.is_set()
    wait_idle(store)
    assert overlapped >= 1, "no write committed while the index trained"
    assert store.tables.vector_indexed(S.SUMMARIES)
    assert store.counts()["summaries"] == 5000 + 5 * during
    assert store.tables.count(S.SUMMARIES, "status = 'deleted'") == during
    assert {r["id"] for r in store.tables.rows(S.SUMMARIES, None, ["id"])} == set(rows.vectors)
    got = store.get_summaries("u", ids=[first[100 + i] for i in range(during)])
    assert [s.text for s in got] == [f"new {i}" for i in range(during)]
    assert store.lexical_search(RowScope("u"), f"new {during - 1}", 1)[0][0] == first[99 + during]


def test_close_waits_for_a_running_build_and_joins_the_thread(
    make_store: Callable[..., Store], watch: Callable[[Store], Builds], tmp_path: Path
) -> None:
    store = make_store("m", vector_index_min_rows=MIN_ROWS, dense_cache_bytes=0)
    builds = watch(store)
    builds.gate.clear()
    Rows().commit(store, 300)
    assert builds.started.wait(WAIT_S)
    threading.Timer(0.3, builds.gate.set).start()
    store.close()  # returns only once the held build has run
    assert builds.finished.is_set()
    assert index_threads() == []
    again = make_store("m", vector_index_min_rows=MIN_ROWS, read_only=True, dense_cache_bytes=0)
    assert again.tables.vector_indexed(S.SUMMARIES)
    assert trained_rows(tmp_path / "m") == 300


def test_a_failed_build_is_logged_and_retried_by_the_next_write(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = upkeep.build_vector_index
    fail = [True]

    def build(lance: LanceTables, table: str) -> tuple[int, int]:
        if fail[0]:
            raise RuntimeError("disk on fire")
        return real(lance, table)

    monkeypatch.setattr(upkeep, "build_vector_index", build)
    rows = Rows()
    with capture_events() as events:
        rows.commit(store, 300)  # the commit itself succeeds
        assert store._compactor.wait_idle(WAIT_S)
    failed = [e for e in events if e["event"] == "index.maintenance_failed"]
    assert failed and failed[0]["level"] == "error" and "disk on fire" in str(failed[0])
    assert isinstance(store._compactor.worker.last_error, RuntimeError)
    assert store.dense_search(RowScope("u"), rows.vectors["g0-s1"].tolist(), 1)[0][0] == "g0-s1"
    fail[0] = False
    rows.commit(store, 10)
    wait_idle(store)
    assert store.tables.vector_indexed(S.SUMMARIES)


def test_optimize_does_due_work_synchronously(
    store: Store, watch: Callable[[Store], Builds], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    builds = watch(store)
    monkeypatch.setattr(store._compactor.worker, "signal", lambda: None)  # no background run
    rows = Rows()
    rows.commit(store, 300)
    assert not store.tables.vector_indexed(S.SUMMARIES)
    store.optimize()
    assert store.tables.vector_indexed(S.SUMMARIES)
    rows.commit(store, 400)
    store.optimize()  # 700 > 2 x 300: retrained here and now
    assert trained_rows(tmp_path / "store") == 700
    assert builds.threads == [threading.current_thread().name] * 2


def test_compaction_runs_on_the_cadence_in_the_background(store: Store) -> None:
    for i in range(OPTIMIZE_EVERY):
        store.append_turns(make_turns("u", 1, prefix=f"b{i}-"))
    wait_idle(store)
    assert store.tables.fragments(S.TURNS) <= 2
    assert store._compactor._writes == 0


def test_compaction_prunes_versions_past_the_retention_and_keeps_every_row(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """LanceDB keeps every commit's version 7 days by default: a long ingest left 18x its data
    on disk and made each compaction walk thousands of manifests. The compactor's clock is set
    past the retention (no sleep: a 1 ms retention and a 10 ms sleep once left every file on a
    busy machine)."""
    monkeypatch.setattr(store._compactor.worker, "signal", lambda: None)  # no background run
    for i in range(20):
        store.append_turns(make_turns("u", 2, prefix=f"b{i}-"))
    files = tmp_path / "store" / "lance" / f"{S.TURNS}.lance"
    before = len(store.tables.table(S.TURNS).list_versions())
    data_before = len(list((files / "data").iterdir()))
    assert before > 20
    later = utcnow() + upkeep.VERSION_RETENTION + timedelta(minutes=1)
    monkeypatch.setattr(store._compactor, "clock", lambda: later)
    store.optimize()
    assert len(store.tables.table(S.TURNS).list_versions()) <= 2
    assert len(list((files / "data").iterdir())) < data_before
    assert store.counts()["turns"] == 40
    assert len(store.get_turns("u")) == 40


def test_versions_inside_the_retention_survive_compaction(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `hymem repair` rolls back to: recent versions are not pruned. The clock stands
    where the writes began, so no wait however long, on a busy machine, prunes them."""
    monkeypatch.setattr(store._compactor.worker, "signal", lambda: None)
    began = utcnow()
    monkeypatch.setattr(store._compactor, "clock", lambda: began)
    for i in range(5):
        store.append_turns(make_turns("u", 1, prefix=f"b{i}-"))
    before = len(store.tables.table(S.TURNS).list_versions())
    store.optimize()
    assert len(store.tables.table(S.TURNS).list_versions()) > before


def test_the_prune_cutoff_is_the_clock_minus_the_retention() -> None:
    """LanceDB measures the age back from its wall clock; the cutoff is the caller's."""
    now = utcnow()
    assert abs(upkeep.prune_age(now) - upkeep.VERSION_RETENTION) < timedelta(seconds=5)
    assert upkeep.prune_age(now + timedelta(days=1)) == timedelta(0)
    assert upkeep.prune_age(now - timedelta(days=1)) >= timedelta(days=1)


def test_an_index_no_search_reads_is_built_only_when_asked_for(
    make_store: Callable[..., Store],
) -> None:
    """Every user fits the exact in-memory dense cache, so no search reads IVF_PQ: the
    maintainer does not build it; `optimize()` (readers elsewhere may lack the cache) does."""
    store = make_store("m", vector_index_min_rows=MIN_ROWS)
    rows = Rows()
    rows.commit(store, 300)
    wait_idle(store)
    assert not store.tables.vector_indexed(S.SUMMARIES)
    assert store.dense_search(RowScope("u"), rows.vectors["g0-s3"].tolist(), 1)[0][0] == "g0-s3"
    wait_idle(store)
    assert not store.tables.vector_indexed(S.SUMMARIES)
    store.optimize()
    assert store.tables.vector_indexed(S.SUMMARIES)


def test_a_user_too_big_for_the_cache_gets_the_index_built(
    make_store: Callable[..., Store],
) -> None:
    store = make_store("m", vector_index_min_rows=MIN_ROWS, dense_cache_bytes=50_000)
    rows = Rows()
    rows.commit(store, 300)  # ~1.7 kB a row: far over the 50 kB cache
    wait_idle(store)
    assert not store.tables.vector_indexed(S.SUMMARIES)
    with capture_events() as events:
        hit = store.dense_search(RowScope("u"), rows.vectors["g0-s3"].tolist(), 1)
    assert hit[0][0] == "g0-s3"  # answered flat by LanceDB meanwhile
    assert [e["table"] for e in events if e["event"] == "dense.user_over_cache"] == [S.SUMMARIES]
    wait_idle(store)
    assert store.tables.vector_indexed(S.SUMMARIES)
    assert not store.tables.vector_indexed(S.SEGMENTS)  # no search needed that one


def test_read_only_and_idle_stores_start_no_maintainer(
    make_store: Callable[..., Store],
) -> None:
    writer = make_store("m", vector_index_min_rows=MIN_ROWS, dense_cache_bytes=0)
    assert index_threads() == []  # started lazily, by the first write
    Rows().commit(writer, 10)
    assert len(index_threads()) == 1
    reader = make_store("m", read_only=True, vector_index_min_rows=MIN_ROWS)
    assert reader.counts()["summaries"] == 10
    reader.close()
    writer.close()
    assert index_threads() == []
