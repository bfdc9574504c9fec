"""Issue #27 (2, 3): an import is all or nothing, and imported records pass add()'s checks.

Every test imports a hand-built export (12 turns, 3 segments of 4 turns, 12 summaries) into an
`InMemoryStore` that already holds another user, and checks that a refused file is a
`UserInputError` naming its line and leaves the store exactly as it was (counts and exports),
and that a storage fault in the middle of the writes is rolled back."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hymem.core.errors import StorageFullError, UserInputError
from hymem.core.types import SegmentRecord, SummaryRecord, TurnRecord, TurnStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.memory.store import InMemoryStore
from hymem.manage import portable
from hymem.manage.portable import export_user, import_file
from hypothesis import given, settings
from hypothesis import strategies as st

T0 = "2024-01-01T10:00:00"
EMBEDDER = HashingEmbedder(32)


def _lines(user: str = "ann") -> list[dict[str, Any]]:
    turns = [
        {
            "kind": "turn",
            "id": f"t{i}",
            "user_id": user,
            "session_id": "s0",
            "seq": i,
            "speaker": "Ann" if i % 2 == 0 else "Bo",
            "text": f"turn number {i} about the dog Rex",
            "timestamp": T0,
            "status": "stored",
            "segment_id": f"g{i // 4}",
            "created_at": T0,
            "metadata": {"topic": "pets"},
        }
        for i in range(12)
    ]
    segments = [
        {
            "kind": "segment",
            "id": f"g{g}",
            "user_id": user,
            "session_ids": ["s0"],
            "turn_ids": [f"t{i}" for i in range(4 * g, 4 * g + 4)],
            "text": "\n".join(f"Ann: turn number {i}" for i in range(4 * g, 4 * g + 4)),
            "time_start": T0,
            "time_end": T0,
            "created_at": f"2024-01-01T10:00:0{g}",
            "metadata": {"topic": "pets"},
        }
        for g in range(3)
    ]
    summaries = [
        {
            "kind": "summary",
            "id": f"m{i}",
            "user_id": user,
            "segment_id": f"g{i // 4}",
            "text": f"Ann said fact {i} about Rex",
            "source_turn_ids": [f"t{i}"],
            "created_at": T0,
            "updated_at": T0,
            "metadata": {"topic": "pets"},
        }
        for i in range(12)
    ]
    header = {"kind": "header", "format": 1, "user_id": user, "exported_at": T0}
    end = {"kind": "end", "counts": {"turn": 12, "segment": 3, "summary": 12}}
    return [header, *turns, *segments, *summaries, end]


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def _store() -> InMemoryStore:
    """A store already holding user "zed", so "as before" is not just "empty"."""
    store = InMemoryStore(EMBEDDER.dim, embedder_name=EMBEDDER.name)
    turn = TurnRecord(
        id="z0",
        user_id="zed",
        session_id="s",
        seq=0,
        speaker="Zed",
        text="my cat is Tom",
        created_at=T0,
        status=TurnStatus.STORED,
        segment_id="zg",  # type: ignore[arg-type]
    )
    store.append_turns([turn])
    vec = np.asarray(EMBEDDER.embed(["my cat is Tom"]))[0].tolist()
    seg = SegmentRecord(
        id="zg",
        user_id="zed",
        session_ids=["s"],
        turn_ids=["z0"],
        text="Zed: my cat is Tom",
        vector=vec,
        created_at=T0,  # type: ignore[arg-type]
    )
    summ = SummaryRecord(
        id="zm",
        user_id="zed",
        segment_id="zg",
        text="Zed's cat is Tom",
        vector=vec,
        created_at=T0,
        updated_at=T0,  # type: ignore[arg-type]
    )
    store.commit_segments("zed", [seg], [summ], ["z0"])
    return store


def _state(store: InMemoryStore, tmp: Path, users: tuple[str, ...] = ("ann", "zed", "new")) -> Any:
    out: dict[str, Any] = {"all": store.counts()}
    for user in users:
        path = tmp / f"state-{user}.jsonl"
        export_user(store, user, path)
        lines = path.read_text(encoding="utf-8").splitlines()[1:]  # the header has the time
        out[user] = (store.counts(user), lines)
        path.unlink()
    return out


def _refused(store: InMemoryStore, path: Path, line: int, *words: str) -> None:
    before = _state(store, path.parent)
    with pytest.raises(UserInputError) as err:
        import_file(store, EMBEDDER, path, user_id=None)
    assert f"line {line}:" in str(err.value), str(err.value)
    for word in words:
        assert word in str(err.value), str(err.value)
    assert _state(store, path.parent) == before


def test_the_hand_built_file_imports_whole(tmp_path: Path) -> None:
    store = _store()
    report = import_file(store, EMBEDDER, _write(tmp_path / "a.jsonl", _lines()), user_id=None)
    assert (report.turns, report.segments, report.summaries) == (12, 3, 12)
    counts = store.counts("ann")
    assert (counts["turns"], counts["pending_turns"], counts["segments"]) == (12, 0, 3)
    assert [t.segment_id for t in store.get_turns("ann")] == [f"g{i // 4}" for i in range(12)]


# --- case 2: links are checked before the first write -------------------------------------


def test_a_missing_segment_line_is_refused_before_any_turn_is_written(tmp_path: Path) -> None:
    rows = _lines()
    del rows[13]  # segment g0: its 4 turns and 4 summaries link to it
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), len(rows), "end", "segment")
    rows[-1]["counts"]["segment"] = 2  # the end line agrees: the links still refuse it
    _refused(_store(), _write(tmp_path / "b.jsonl", rows), 2, "segment", "g0")


def test_a_summary_holding_a_lone_surrogate_is_normalised_not_a_raw_error(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    rows = [json.dumps(r) for r in _lines()]
    rows[-2] = rows[-2].replace("fact 11", "fact 11 \\ud800")
    _write(path, rows)
    store = _store()
    import_file(store, EMBEDDER, path, user_id=None)
    texts = {s.id: s.text for s in store.get_summaries("ann", statuses=None)}
    assert texts["m11"] == "Ann said fact 11 \ufffd about Rex"


def test_a_summary_linking_to_an_unknown_version_is_refused(tmp_path: Path) -> None:
    rows = _lines()
    rows[-2]["previous_id"] = "nope"
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), len(rows) - 1, "nope")


def test_a_stored_turn_without_a_segment_is_refused(tmp_path: Path) -> None:
    rows = _lines()
    rows[1]["segment_id"] = None
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), 2, "stored")


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    rows = _lines()
    rows[2]["id"] = "t0"
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), 3, "t0")


# --- case 3: the end line and add()'s checks -------------------------------------------------


def test_the_end_line_must_match_what_was_read(tmp_path: Path) -> None:
    rows = _lines()
    cut = [r for r in rows if r.get("id") not in {"t4", "t5", "t6"}]  # 3 turns from the middle
    _refused(_store(), _write(tmp_path / "a.jsonl", cut), len(cut), "turn", "12", "9")


@pytest.mark.parametrize(
    "counts",
    [
        {"turn": -1, "segment": 3, "summary": 12},
        {"segment": 3, "summary": 12},
        {"turn": 12.0, "segment": 3, "summary": 12},
        {"turn": True, "segment": 3, "summary": 12},
        {"turn": 12, "segment": 3, "summary": 12, "extra": 0},
        None,
    ],
)
def test_bad_end_counts_are_refused(tmp_path: Path, counts: Any) -> None:
    rows = _lines()
    rows[-1]["counts"] = counts
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), len(rows), "end")


def test_a_file_without_its_end_line_names_its_last_line(tmp_path: Path) -> None:
    rows = _lines()[:-1]
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), len(rows), "truncated")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("text", "x" * (2 * 1024 * 1024), ("limit",)),
        ("text", "\x00\x01", ("empty",)),
        ("speaker", "", ("speaker",)),
        ("session_id", "", ("session_id",)),
        ("metadata", {"and": 1}, ("reserved",)),
        ("metadata", {"bad key!": 1}, ("not allowed",)),
        ("metadata", {"k": "\x00"}, ("NUL",)),
        ("seq", -1e30, ("seq",)),
        ("seq", -1, ("seq",)),
        ("id", "t\x00", ("id",)),
    ],
)
def test_a_turn_that_add_would_refuse_is_refused(
    tmp_path: Path, field: str, value: Any, words: tuple[str, ...]
) -> None:
    rows = _lines()
    rows[5][field] = value
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), 6, *words)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_metadata_is_refused(tmp_path: Path, literal: str) -> None:
    rows = [json.dumps(r) for r in _lines()]
    rows[-2] = rows[-2].replace('"topic": "pets"', f'"topic": {literal}')
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), len(rows) - 1, "finite")


def test_nul_in_a_turn_is_normalised_as_add_does(tmp_path: Path) -> None:
    rows = _lines()
    rows[5]["text"] = "turn\x00 five \ud800"
    store = _store()
    import_file(store, EMBEDDER, _write(tmp_path / "a.jsonl", rows), user_id=None)
    assert store.get_turns("ann", ids=["t4"])[0].text == "turn five \ufffd"


@pytest.mark.parametrize("depth", [100_000, 5_000])
def test_a_deeply_nested_line_is_refused(tmp_path: Path, depth: int) -> None:
    rows: list[Any] = _lines()
    rows[5] = json.dumps(rows[5])[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), 6)


def test_a_summary_over_the_memory_text_limit_is_refused(tmp_path: Path) -> None:
    rows = _lines()
    rows[-2]["text"] = "word " * 2_000
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), len(rows) - 1, "limit")


# --- case 2: a storage fault during the writes rolls back -----------------------------------


def _fail_once(
    monkeypatch: pytest.MonkeyPatch, cls: type, name: str, on_call: int
) -> Callable[[], int]:
    real = getattr(cls, name)
    calls: list[int] = []

    def flaky(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == on_call:
            raise StorageFullError("injected: the disk is full")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, flaky)
    return lambda: len(calls)


@pytest.mark.parametrize(("name", "on_call"), [("append_turns", 1), ("commit_segments", 2)])
def test_a_fault_in_the_middle_of_the_writes_rolls_the_import_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, on_call: int
) -> None:
    monkeypatch.setattr(portable, "COMMIT_SEGMENTS", 1)  # one commit per segment
    path = _write(tmp_path / "a.jsonl", _lines())
    store = _store()
    before = _state(store, tmp_path)
    _fail_once(monkeypatch, InMemoryStore, name, on_call)
    with pytest.raises(StorageFullError):
        import_file(store, EMBEDDER, path, user_id=None)
    assert _state(store, tmp_path) == before
    report = import_file(store, EMBEDDER, path, user_id=None)  # the retry imports it whole
    assert (report.turns, report.segments, report.summaries) == (12, 3, 12)
    assert store.counts("ann")["pending_turns"] == 0


def test_a_fault_while_resuming_returns_to_what_the_killed_import_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user already holding part of the file (a crash killed the process mid-import, so no
    roll back ran): a fault in the resume withdraws exactly what the resume wrote, leaving
    the store as the killed import left it; running the import again finishes it."""
    monkeypatch.setattr(portable, "COMMIT_SEGMENTS", 1)
    path = _write(tmp_path / "a.jsonl", _lines())
    store = _store()
    partial = [
        TurnRecord.model_validate({**r, "status": "pending", "segment_id": None})
        for r in (dict(x) for x in _lines()[1:5])
        if r.pop("kind")
    ]
    store.append_turns(partial)  # what a killed import left
    before = store.counts("ann")
    _fail_once(monkeypatch, InMemoryStore, "commit_segments", 2)
    with pytest.raises(StorageFullError) as err:
        import_file(store, EMBEDDER, path, user_id=None)
    assert "again" in "\n".join([str(err.value), *getattr(err.value, "__notes__", [])])
    assert store.counts("ann") == before
    assert sorted(t.id for t in store.get_turns("ann")) == sorted(t.id for t in partial)
    assert all(t.status is TurnStatus.PENDING for t in store.get_turns("ann"))
    import_file(store, EMBEDDER, path, user_id=None)
    counts = store.counts("ann")
    assert (counts["turns"], counts["pending_turns"], counts["segments"]) == (12, 0, 3)


# --- properties: any line content is imported or refused by line, never half-written -------

_CHARS = st.characters(blacklist_categories=[]) | st.sampled_from(
    ["\x00", "\ud800", "\u2028", "\n", "\r", "{", '"', "\\"]
)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(_CHARS, max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(_CHARS, max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_FIELDS = sorted({k for row in _lines() for k in row} | {"bad key!", "vector"})


@st.composite
def _damaged(draw: st.DrawFn) -> list[str]:
    """The hand-built file with one line replaced, dropped, repeated or one field changed."""
    rows: list[Any] = _lines()
    i = draw(st.integers(0, len(rows) - 1))
    how = draw(st.sampled_from(["text", "json", "field", "drop_field", "drop", "repeat"]))
    if how == "text":
        rows[i] = draw(st.text(_CHARS, max_size=60))
    elif how == "json":
        rows[i] = json.dumps(draw(_JSON), ensure_ascii=draw(st.booleans()))
    elif how == "field":
        rows[i][draw(st.sampled_from(_FIELDS))] = draw(_JSON)
    elif how == "drop_field":
        rows[i].pop(draw(st.sampled_from(sorted(rows[i]))))
    elif how == "drop":
        del rows[i]
    else:
        rows.insert(i, rows[i])
    return [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]


def _consistent(store: InMemoryStore, user: str) -> None:
    """No stored turn without its segment, no summary without its segment."""
    turns = store.get_turns(user)
    segments = {s.id for s in store.get_segments(user, [t.segment_id or "" for t in turns])}
    for turn in turns:
        assert turn.status is TurnStatus.PENDING or turn.segment_id in segments
    summaries = store.get_summaries(user, statuses=None)
    have = {s.id for s in store.get_segments(user, [s.segment_id for s in summaries])}
    assert all(s.segment_id in have for s in summaries)


@settings(max_examples=150, deadline=None)
@given(lines=_damaged())
def test_any_line_is_imported_or_refused_by_its_line_and_nothing_half_written(
    lines: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "a.jsonl"
        path.write_text("".join(f"{line}\n" for line in lines), "utf-8", "surrogatepass")
        store = _store()
        before = _state(store, Path(tmp))
        try:
            report = import_file(store, EMBEDDER, path, user_id=None)
        except UserInputError as exc:
            assert re.search(r", line \d+: ", str(exc)), str(exc)
            assert _state(store, Path(tmp)) == before
            return
        _consistent(store, report.user_id)
        counts = store.counts(report.user_id)
        assert (counts["turns"], counts["segments"]) == (report.turns, report.segments)


def test_the_readme_states_what_import_guarantees() -> None:
    docs = Path(__file__).parents[2] / "docs"
    pages = ("library.md", "errors.md")
    readme = "\n".join((docs / page).read_text(encoding="utf-8") for page in pages)
    text = " ".join(readme.split())
    for words in (
        "validates the whole file before its first write",
        "naming the file and the line (never another exception)",
        "passes the same checks as `add()`",
        "the `end` line's counts must match what was read",
        "An import is all or nothing",
        "so the store is exactly as before",
        "a bad line of an imported file (names the file and the line",
    ):
        assert words in text, words


# --- issue 30: export format 2 carries memory ids; a format-1 file still imports ------------


def _chained(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """m1 a later version of m0, m2 of m1 (superseded in turn), as a 0.2 update chain."""
    by_id = {r["id"]: r for r in rows if r["kind"] == "summary"}
    for old, new in (("m0", "m1"), ("m1", "m2")):
        by_id[new]["previous_id"] = old
        by_id[new]["version"] = by_id[old].get("version", 1) + 1
        by_id[old].update(status="superseded", superseded_by=new)
    return rows


def test_a_format_one_file_gets_memory_ids_from_its_chains(tmp_path: Path) -> None:
    store = _store()
    import_file(store, EMBEDDER, _write(tmp_path / "a.jsonl", _chained(_lines())), user_id=None)
    got = {s.id: s.memory_id for s in store.get_summaries("ann", statuses=None)}
    assert got["m0"] == got["m1"] == got["m2"] == "m0" and got["m3"] == "m3"


def test_an_export_round_trips_memory_ids_and_validity_in_format_two(tmp_path: Path) -> None:
    store = _store()
    import_file(store, EMBEDDER, _write(tmp_path / "a.jsonl", _chained(_lines())), user_id=None)
    out = tmp_path / "b.jsonl"
    export_user(store, "ann", out)
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["format"] == 2
    assert {r["id"]: r["memory_id"] for r in rows if r["kind"] == "summary"}["m2"] == "m0"
    again = InMemoryStore(EMBEDDER.dim, embedder_name=EMBEDDER.name)
    import_file(again, EMBEDDER, out, user_id="new")
    got = {s.id: (s.memory_id, s.valid_from) for s in again.get_summaries("new", statuses=None)}
    want = {s.id: (s.memory_id, s.valid_from) for s in store.get_summaries("ann", statuses=None)}
    assert got == want


def test_a_format_two_memory_id_that_is_not_in_the_file_is_refused(tmp_path: Path) -> None:
    rows = _lines()
    rows[0]["format"] = 2
    rows[-2]["memory_id"] = "elsewhere"
    _refused(_store(), _write(tmp_path / "a.jsonl", rows), len(rows) - 1, "elsewhere")
