"""A worker's lexical replica follows LanceDB written by another connection, on real LanceDB and
Tantivy: after every catch-up it holds exactly what a from-scratch rebuild holds."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
import tantivy
from hymem.core.types import Level, SegmentRecord, SummaryRecord, SummaryStatus
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance import upkeep
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.analysis import ANALYZER_NAME, build_analyzer
from hymem.indexes.lexical.docs import build_schema, doc_key
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.replica import CatchUp, LexicalReplica
from hymem.indexes.lexical.sync import LEX_COLS, SUMMARY_LEX_COLS, segment_doc, summary_doc

pytestmark = pytest.mark.integration

DIM = 8
T0 = datetime(2024, 1, 1)
WORDS = ["pottery", "violin", "beach", "museum", "hiking", "jazz", "library", "shelter"]
TERMS = ["pottery", "violin", "jazz", "shelter", "nothing"]
USERS = ["alice", "bob", "carol"]


def summary(user: str, id_: str, text: str, status: str = "active") -> SummaryRecord:
    return SummaryRecord(
        id=id_,
        user_id=user,
        segment_id="seg",
        text=text,
        vector=[1.0, *([0.0] * (DIM - 1))],
        time_start=T0,
        status=SummaryStatus(status),
        created_at=T0,
        updated_at=T0,
    )


def segment(user: str, id_: str, text: str) -> SegmentRecord:
    return SegmentRecord(
        id=id_,
        user_id=user,
        session_ids=["s1"],
        turn_ids=[],
        text=text,
        time_start=T0,
        token_count=len(text.split()),
        vector=[0.0, 1.0, *([0.0] * (DIM - 2))],
        created_at=T0,
    )


class Writer:
    """Another process's connection: mutates the tables the replica follows."""

    def __init__(self, path: Path) -> None:
        self.lance = LanceTables(path, read_only=False)
        self.lance.ensure(S.SUMMARIES, S.summaries_schema(DIM))
        self.lance.ensure(S.SEGMENTS, S.segments_schema(DIM))

    def add(self, summaries: list[SummaryRecord], segments: list[SegmentRecord] = ()) -> None:
        self.lance.add(S.SUMMARIES, S.summaries_to_arrow(summaries, DIM))
        self.lance.add(S.SEGMENTS, S.segments_to_arrow(list(segments), DIM))

    def delete(self, table: str, user: str, ids: list[str]) -> None:
        self.lance.delete(table, F.user_ids(user, ids))

    def set_status(self, user: str, ids: list[str], status: str) -> None:
        """A sleep-style status change: merge_insert on (user_id, id), as `apply_status` does."""
        rows = self.lance.rows(S.SUMMARIES, F.user_ids(user, ids))
        for row in rows:
            row.update(status=status, updated_at=row["updated_at"] + timedelta(seconds=1))
        data = pa.Table.from_pylist(rows, schema=S.summaries_schema(DIM))
        self.lance.upsert(S.SUMMARIES, data, on=["user_id", "id"])

    def erase(self, user: str) -> None:
        for table in (S.SUMMARIES, S.SEGMENTS):
            self.lance.delete(table, F.eq("user_id", user))

    def compact(self) -> None:
        for table in (S.SUMMARIES, S.SEGMENTS):
            upkeep.purge_deleted(self.lance, table, keep=timedelta(0))

    def live(self, table: str) -> dict[tuple[str, str], dict]:
        cols = SUMMARY_LEX_COLS if table == S.SUMMARIES else LEX_COLS
        return {(r["user_id"], r["id"]): r for r in self.lance.rows(table, None, cols)}


@dataclass
class World:
    writer: Writer
    replica: LexicalReplica
    lex: LexicalIndex
    reference: LexicalIndex
    cache: Path
    db: Path
    reader: LanceTables

    def reopen(self) -> LexicalReplica:
        """A restarted worker on the same cache folder, with a fresh connection."""
        self.lex.close()
        self.lex = LexicalIndex(self.cache / "lexical", writable=True)
        reader = LanceTables(self.db, read_only=False)  # no read consistency interval at all
        self.reader = reader
        self.replica = LexicalReplica(reader, self.lex, self.cache / "replica.json")
        return self.replica


@pytest.fixture
def world(tmp_path: Path) -> World:
    db = tmp_path / "db"
    writer = Writer(db)
    cache = tmp_path / "cache"
    lex = LexicalIndex(cache / "lexical", writable=True)
    reader = LanceTables(db, read_only=False)
    replica = LexicalReplica(reader, lex, cache / "replica.json")
    reference = LexicalIndex(tmp_path / "reference", writable=True)
    return World(writer, replica, lex, reference, cache, db, reader)


def _tantivy(path: Path) -> tantivy.Index:
    index = tantivy.Index(build_schema(), path=str(path), reuse=True)
    index.register_tokenizer(ANALYZER_NAME, build_analyzer())
    return index


def _has(searcher: tantivy.Searcher, schema: tantivy.Schema, key: str, status: str) -> int:
    q = tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Must, tantivy.Query.term_query(schema, "key", key)),
            (tantivy.Occur.Must, tantivy.Query.term_query(schema, "status", status)),
        ]
    )
    return int(searcher.search(q, 1, count=True).count or 0)


def assert_matches(w: World) -> None:
    """The replica holds exactly the live rows' documents: per level the same (user, id)
    keys, each once with its current status; the same counts and search results as a
    from-scratch rebuild."""
    summaries, segments = w.writer.live(S.SUMMARIES), w.writer.live(S.SEGMENTS)
    docs = [*(summary_doc(r) for r in summaries.values()), *map(segment_doc, segments.values())]
    w.reference.rebuild(docs)
    assert w.lex.count(Level.SUMMARY) == len(summaries)
    assert w.lex.count(Level.SEGMENT) == len(segments)
    for status in SummaryStatus:
        want = w.reference.count(Level.SUMMARY, status.value)
        assert w.lex.count(Level.SUMMARY, status.value) == want
    schema, searcher = build_schema(), _tantivy(w.lex.path).searcher()
    for (user, id_), row in summaries.items():
        assert _has(searcher, schema, doc_key(Level.SUMMARY, user, id_), row["status"]) == 1
    for user, id_ in segments:
        assert _has(searcher, schema, doc_key(Level.SEGMENT, user, id_), "active") == 1
    for user in USERS:
        for term in TERMS:
            for level in Level:
                got = w.lex.search(user, term, 1000, level=level, statuses=None)
                want = w.reference.search(user, term, 1000, level=level, statuses=None)
                assert {i for i, _ in got} == {i for i, _ in want}, (user, term, level)


def catch_up(w: World) -> CatchUp:
    result = w.replica.catch_up()
    assert result.versions == {
        S.SUMMARIES: w.writer.lance.version(S.SUMMARIES),
        S.SEGMENTS: w.writer.lance.version(S.SEGMENTS),
    }
    assert w.replica.versions == result.versions
    assert_matches(w)
    return result


def test_first_catch_up_builds_everything_then_follows_appends(world: World) -> None:
    world.writer.add([summary("alice", "a1", "pottery class")], [segment("bob", "g1", "jazz")])
    first = catch_up(world)
    assert first.rebuilt and first.upserted == 2 and first.users == {"alice", "bob"}
    world.writer.add([summary("carol", "c1", "violin lesson"), summary("carol", "c2", "beach")])
    step = catch_up(world)
    assert not step.rebuilt
    assert (step.upserted, step.deleted, step.rows_read) == (2, 0, 2)  # only the new rows
    assert step.users == {"carol"}


def test_two_users_sharing_an_id_are_kept_apart(world: World) -> None:
    world.writer.add(
        [summary("alice", "s1", "pottery"), summary("bob", "s1", "pottery")],
        [segment("alice", "g1", "jazz"), segment("bob", "g1", "jazz")],
    )
    catch_up(world)
    world.writer.delete(S.SUMMARIES, "bob", ["s1"])
    world.writer.delete(S.SEGMENTS, "alice", ["g1"])
    step = catch_up(world)
    assert (step.upserted, step.deleted, step.users) == (0, 2, {"alice", "bob"})
    assert world.lex.search("alice", "pottery", 5) != []
    assert world.lex.search("bob", "pottery", 5) == []


def test_status_change_reindexes_the_summary(world: World) -> None:
    world.writer.add([summary("alice", f"s{i}", f"{WORDS[i]} day") for i in range(4)])
    world.writer.add([summary("bob", "s0", "pottery day")])
    catch_up(world)
    world.writer.set_status("alice", ["s1", "s2"], "superseded")
    step = catch_up(world)
    assert (step.upserted, step.deleted, step.users) == (2, 0, {"alice"})
    assert world.lex.search("alice", "violin", 5) == []  # active only, by default
    assert world.lex.count(Level.SUMMARY, "superseded") == 2


def test_compaction_moves_documents_without_loss_or_duplicates(world: World) -> None:
    for i in range(6):  # one fragment per commit
        world.writer.add([summary(USERS[i % 3], f"s{i}", f"{WORDS[i]} trip")])
        world.writer.add([], [segment(USERS[i % 3], f"g{i}", f"{WORDS[i]} talk")])
    catch_up(world)
    world.writer.delete(S.SUMMARIES, "alice", ["s0"])
    world.writer.set_status("bob", ["s1"], "deleted")
    world.writer.compact()
    step = catch_up(world)
    # the moved rows keep their documents: only the real changes count, and their users
    assert (step.upserted, step.deleted, step.users) == (1, 1, {"alice", "bob"})
    world.writer.compact()
    assert catch_up(world).users == frozenset()


def test_erasing_a_user_then_purging(world: World) -> None:
    world.writer.add([summary(u, "s1", "pottery") for u in USERS], [segment("alice", "g", "jazz")])
    world.writer.add([summary("alice", "s2", "violin")])
    catch_up(world)
    world.writer.erase("alice")
    step = catch_up(world)
    assert (step.deleted, step.users) == (3, {"alice"})
    world.writer.compact()
    assert catch_up(world).users == frozenset()


def test_a_restarted_worker_resumes_from_its_state(world: World) -> None:
    world.writer.add([summary("alice", "s1", "pottery")])
    catch_up(world)
    world.writer.add([summary("bob", "s1", "violin")])
    world.reopen()
    step = catch_up(world)
    assert not step.rebuilt and (step.upserted, step.users) == (1, {"bob"})


@pytest.mark.parametrize("damage", ["lost", "garbage", "truncated keys", "index wiped"])
def test_unusable_state_rebuilds(world: World, damage: str) -> None:
    world.writer.add([summary("alice", "s1", "pottery")], [segment("bob", "g1", "jazz")])
    catch_up(world)
    world.writer.add([summary("bob", "s2", "violin")])
    world.writer.delete(S.SUMMARIES, "alice", ["s1"])  # the next catch-up needs its keys
    state = world.cache / "replica.json"
    if damage == "lost":
        state.unlink()
    elif damage == "garbage":
        state.write_bytes(b"\x00{not json")
    elif damage == "truncated keys":
        for path in state.with_name("replica.json.keys").iterdir():
            path.write_bytes(b"ARROW1")
    else:
        world.lex.close()
        for path in (world.cache / "lexical").iterdir():
            path.unlink()
    world.reopen()
    step = catch_up(world)
    assert step.rebuilt and step.upserted == 2 and step.users == {"bob"}
    assert not catch_up(world).rebuilt


def test_a_recreated_table_rebuilds(world: World) -> None:
    world.writer.add([summary("alice", "s1", "pottery")])
    world.writer.add([summary("alice", "s2", "violin")])
    catch_up(world)
    world.writer.lance.drop(S.SUMMARIES)
    world.writer.lance.ensure(S.SUMMARIES, S.summaries_schema(DIM))
    for i in range(4):  # the version passes the recorded one; fragment 0 is another file
        world.writer.add([summary("bob", f"n{i}", "jazz")])
    step = catch_up(world)
    assert step.rebuilt


def test_nothing_new_reads_no_row_data(world: World) -> None:
    """With every data file gone, only a catch-up that reads manifests alone can succeed."""
    world.writer.add([summary(u, f"s{i}", WORDS[i]) for i, u in enumerate(USERS)])
    world.writer.add([], [segment("alice", "g1", "jazz")])
    catch_up(world)
    # a commit that adds a version but no fragment: an index on user_id
    world.writer.lance.table(S.SUMMARIES).create_scalar_index("user_id")
    data_files = list(world.db.glob("*.lance/data/*.lance"))
    assert data_files
    for path in data_files:
        path.unlink()
    step = world.replica.catch_up()
    assert (step.upserted, step.deleted, step.rows_read, step.users) == (0, 0, 0, frozenset())
    assert step.versions[S.SUMMARIES] == world.writer.lance.version(S.SUMMARIES)
    assert world.replica.catch_up().versions == step.versions
    with pytest.raises(RuntimeError, match="Not found"):  # reading any row now fails
        world.writer.lance.rows(S.SUMMARIES, None)


def test_an_unchanged_table_is_checked_not_pinned_again(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catch-up that finds a table unchanged only asks for its newest version number: on
    an object store, moving the table and pinning a dataset cost two more listings and a
    manifest read each, for every table of every shard a worker catches up."""
    world.writer.add([summary("alice", "s1", "pottery")], [segment("alice", "g1", "jazz")])
    catch_up(world)

    def refused(*_: object) -> None:
        raise AssertionError("an unchanged table was moved or pinned again")

    for name in (S.SUMMARIES, S.SEGMENTS):
        monkeypatch.setattr(world.reader.table(name), "checkout_latest", refused)
        monkeypatch.setattr(world.reader.table(name), "to_lance", refused)
    step = world.replica.catch_up()
    assert (step.upserted, step.deleted, step.users) == (0, 0, frozenset())
    monkeypatch.undo()
    world.writer.add([summary("bob", "s2", "violin")])
    step = catch_up(world)  # a table that moved is read again
    assert (step.upserted, step.users) == (1, frozenset({"bob"}))


def _random_step(rng: random.Random, w: Writer) -> tuple[str, set[str]]:
    """One random mutation: what it did ("noop" when nothing), and the users it changed."""
    kind = rng.choice(
        ["add", "add", "segments", "delete", "delete", "status", "status", "erase", "compact"]
    )
    user = rng.choice(USERS)
    summaries = w.live(S.SUMMARIES)
    mine = sorted(i for u, i in summaries if u == user)
    if kind == "add":
        fresh = [f"s{i}" for i in rng.sample(range(40), 3) if f"s{i}" not in mine]
        w.add([summary(user, i, " ".join(rng.sample(WORDS, 2))) for i in fresh])
        return kind, {user} if fresh else set()
    if kind == "segments":
        segs = {i for u, i in w.live(S.SEGMENTS) if u == user}
        fresh = [f"g{i}" for i in rng.sample(range(20), 2) if f"g{i}" not in segs]
        w.add([], [segment(user, i, rng.choice(WORDS)) for i in fresh])
        return kind, {user} if fresh else set()
    if kind == "delete" and mine:
        w.delete(S.SUMMARIES, user, rng.sample(mine, min(2, len(mine))))
        return kind, {user}
    if kind == "status" and mine:
        w.set_status(user, rng.sample(mine, 1), rng.choice(["superseded", "deleted", "active"]))
        return kind, {user}
    if kind == "erase" and any(u == user for u, _ in [*summaries, *w.live(S.SEGMENTS)]):
        w.erase(user)
        return kind, {user}
    if kind == "compact":
        w.compact()
        return kind, set()
    return "noop", set()


def test_random_sequence_matches_a_rebuild(world: World) -> None:
    rng = random.Random(20240611)
    catch_up(world)
    kinds: Counter[str] = Counter()
    for _ in range(30):
        kind, touched = _random_step(rng, world.writer)
        kinds[kind] += 1
        step = catch_up(world)
        assert (step.users, step.rebuilt) == (touched, False), kind
    kinds_run = ("add", "segments", "delete", "status", "erase", "compact")
    assert all(kinds[k] for k in kinds_run) and kinds["noop"] <= 10, kinds  # it did explore


def _erased_under_the_snapshot(
    world: World, monkeypatch: pytest.MonkeyPatch, times: int = 1
) -> list[int]:
    """Another worker erases alice (delete, compact, prune every older version) right after
    the replica pins its snapshots and before it reads them: the erasure's race, made
    deterministic. Returns the count of erasures run."""
    import hymem.indexes.lexical.replica as replica_module

    real, ran = replica_module.latest_snapshot, [0]

    def racing(lance: LanceTables, name: str, previous: object = None) -> object:
        snap = real(lance, name, previous)  # type: ignore[arg-type]
        if name == S.SEGMENTS and ran[0] < times:  # both tables pinned now
            ran[0] += 1
            # bob's row shares alice's fragment, so the compaction rewrites what was pinned
            n = ran[0]
            world.writer.add([summary("alice", f"x{n}", "museum"), summary("bob", f"k{n}", "jazz")])
            world.writer.erase("alice")
            world.writer.compact()
        return snap

    monkeypatch.setattr(replica_module, "latest_snapshot", racing)
    return ran


@pytest.mark.parametrize("path", ["catch_up", "rebuild"])
def test_versions_pruned_under_the_read_are_read_again_not_damage(
    world: World, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """Before: the read of a pinned fragment whose files an erasure had just pruned raised
    "Not found" inside the Tantivy writer, which marked the worker's index damaged, and the
    rebuild from the same stale snapshot failed too: the neighbour's `add` got
    StoreCorruptedError ("run hymem reindex") for a store nothing had damaged."""
    world.writer.add([summary("alice", "a1", "pottery")], [segment("alice", "g1", "jazz")])
    world.writer.add([summary("bob", "b1", "violin")], [segment("bob", "g2", "beach")])
    catch_up(world)
    world.writer.add([summary("bob", "b2", "hiking")], [segment("carol", "g3", "library")])
    world.writer.delete(S.SUMMARIES, "bob", ["b1"])
    ran = _erased_under_the_snapshot(world, monkeypatch)
    result = catch_up(world) if path == "catch_up" else world.replica.rebuild()
    assert ran == [1]
    assert world.lex.problem is None
    assert_matches(world)
    assert result.versions[S.SUMMARIES] == world.writer.lance.version(S.SUMMARIES)
    assert world.lex.search("alice", "pottery", 5) == []
    assert world.lex.search("bob", "hiking", 5) != []


def test_an_erasure_that_never_stops_pruning_is_a_conflict_not_damage(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hymem.core.errors import CommitConflictError
    from hymem.indexes.lance.tables import PRUNED_ATTEMPTS

    world.writer.add([summary("bob", "b1", "violin")])
    catch_up(world)
    world.writer.add([summary("bob", "b2", "hiking")])
    _erased_under_the_snapshot(world, monkeypatch, times=PRUNED_ATTEMPTS)
    with pytest.raises(CommitConflictError, match="retry"):
        world.replica.catch_up()
    assert world.lex.problem is None
    monkeypatch.undo()
    catch_up(world)  # the next catch-up settles it


def test_a_commit_whose_catch_up_erasures_keep_preempting_is_not_reported_failed(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A worker catches up right after its own commit; that commit is durable, so a caller
    told the write failed would send it again and store it twice. The catch-up is left to
    the next search instead, which must run it whatever the staleness bound."""
    from hymem.indexes.dense.cache import DenseCache
    from hymem.indexes.lance.tables import PRUNED_ATTEMPTS
    from hymem.indexes.objects.objects import MemoryObjects
    from hymem.indexes.objects.replica_sync import ReplicaSync

    sync = ReplicaSync(
        world.replica,
        world.lex,
        MemoryObjects(),
        tmp_path,
        DenseCache(1 << 20, DIM),
        refresh_s=3600.0,
    )
    world.writer.add([summary("bob", "b1", "violin")])
    sync.record()
    world.writer.add([summary("bob", "b2", "hiking")])  # this worker's commit
    _erased_under_the_snapshot(world, monkeypatch, times=PRUNED_ATTEMPTS)
    sync.record()  # no error for a write that is stored
    assert sync.lag_s() == float("inf") and world.lex.problem is None
    monkeypatch.undo()
    sync.maybe_catch_up()  # the next search catches up, an hour's bound or not
    assert_matches(world)
