"""Forged page cursors (issue #27, case 4; issue #40, case 14): any cursor hymem did not make
is a UserInputError (400 over REST), never LanceDB's raw ValueError / UnicodeEncodeError, and
never a page. Cursors are signed, so a well-formed payload hymem did not sign, a real cursor
edited, or one of another user's listing is refused; payloads signed with this process's key
(as if hymem had made them) still reach the value checks, on both stores and as properties:
any string, and any payload in the cursor's own format, gives a valid page or a
UserInputError."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import pytest
from hymem.api.memory import Memory
from hymem.core.errors import UserInputError
from hymem.indexes.memory.store import InMemoryStore
from hymem.indexes.ports import Storage
from hymem.manage import cursor as C
from hymem.manage.editor import Editor
from hymem.testing import store_of
from hymem.write.guard import WriteGuard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures_serve import Served, hashing_memory
from tests.fixtures_store import DIM, make_turns, open_store

USER = "alice"
LEVELS = ["turn", "segment", "summary"]


def _raw(payload: Any) -> bytes:
    return payload if isinstance(payload, bytes) else json.dumps(payload).encode()


def forge(payload: Any) -> str:
    """A cursor in the format hymem uses, unsigned: what a caller can make."""
    return base64.urlsafe_b64encode(_raw(payload)).decode().rstrip("=")


def signed(payload: Any, store: Storage, user: str = USER) -> str:
    """`payload` signed with `store`'s key, as if hymem had made it for `user`: past the
    signature, it reaches the checks of the payload's values."""
    return C.PageCursors.of(store.meta()).seal(user, _raw(payload))


BAD_PAYLOADS = [
    {"l": "turn", "v": 10**30, "i": "t0"},
    {"l": "turn", "v": -(10**30), "i": "t0"},
    {"l": "turn", "v": 2**63, "i": "t0"},
    {"l": "turn", "v": -1, "i": "t0"},
    {"l": "turn", "v": 3, "i": "\ud800"},
    {"l": "summary", "v": "2024-01-01T00:00:00", "i": "\udfff"},
    {"l": "summary", "v": "0001-01-01T00:00:00+14:00", "i": "x"},
    {"l": "summary", "v": "9999-12-31T23:59:59-14:00", "i": "x"},
    {"l": "segment", "v": "2024-01-01", "i": ""},
    json.loads("[" * 60 + "]" * 60),
    b"[" * 1500,
]
FORGED = [
    *(forge(p) for p in BAD_PAYLOADS),
    "\ud800",
    "%%%",
    "",
    ".",
    "x" * (C.MAX_CURSOR_CHARS + 1),
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Storage]]:
    """A LanceDB store and the in-memory twin, each with a few turns of alice."""
    from hymem.embed.embedders import HashingEmbedder

    folder = tmp_path_factory.mktemp("cursors")
    real = open_store(folder / "store", HashingEmbedder(dim=DIM))
    twin = InMemoryStore(DIM, embedder_name="hashing-64")
    for store in (real, twin):
        store.append_turns(make_turns(USER, 5))
    yield {"lancedb": real, "memory": twin}
    real.close()


def editor(store: Storage) -> Editor:
    from hymem.embed.embedders import HashingEmbedder

    return Editor(store, HashingEmbedder(dim=DIM), guard=cast(WriteGuard, None), clock=datetime.now)


def page_or_user_error(store: Storage, level: str, cursor: str) -> None:
    with contextlib.suppress(UserInputError):
        editor(store).get_all(USER, level=level, status="all", limit=3, cursor_text=cursor)


@pytest.mark.parametrize("kind", ["lancedb", "memory"])
@pytest.mark.parametrize("cursor", FORGED, ids=[f"forged{i}" for i in range(len(FORGED))])
@pytest.mark.parametrize("level", LEVELS)
def test_a_forged_cursor_is_a_user_input_error(
    stores: dict[str, Storage], kind: str, cursor: str, level: str
) -> None:
    with pytest.raises(UserInputError):
        editor(stores[kind]).get_all(USER, level=level, status="all", cursor_text=cursor)


@pytest.mark.parametrize("kind", ["lancedb", "memory"])
@pytest.mark.parametrize("n", range(len(BAD_PAYLOADS)))
@pytest.mark.parametrize("level", LEVELS)
def test_a_signed_payload_of_the_wrong_shape_is_a_user_input_error(
    stores: dict[str, Storage], kind: str, n: int, level: str
) -> None:
    cursor = signed(BAD_PAYLOADS[n], stores[kind])
    with pytest.raises(UserInputError):
        editor(stores[kind]).get_all(USER, level=level, status="all", cursor_text=cursor)


def test_a_cursor_hymem_made_still_pages(stores: dict[str, Storage]) -> None:
    for store in stores.values():
        first = editor(store).get_all(USER, level="turn", limit=2)
        assert first.next_cursor is not None
        rest = editor(store).get_all(USER, level="turn", limit=10, cursor_text=first.next_cursor)
        assert [t.id for t in rest.items] == ["t2", "t3", "t4"]


@settings(
    max_examples=150, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(cursor=st.text(max_size=300), level=st.sampled_from(LEVELS))
def test_any_string_is_a_page_or_a_user_input_error(
    stores: dict[str, Storage], cursor: str, level: str
) -> None:
    for store in stores.values():
        page_or_user_error(store, level, cursor)


_VALUES = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63, 2**63 - 1, -(2**63), -1, 10**30, -(10**30)]),
    st.text(max_size=40),
    st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
    st.floats(allow_nan=False),
    st.none(),
    st.booleans(),
)
_IDS = st.one_of(st.text(max_size=20), st.sampled_from(["\ud800", "\x00", "t1"]))
_OTHER = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=10)),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids),
    max_leaves=10,
)


@st.composite
def _payloads(draw: st.DrawFn) -> tuple[str, Any]:
    """(level, payload): mostly a cursor's own shape for that level, with forged values."""
    level = draw(st.sampled_from(LEVELS))
    if draw(st.integers(0, 4)) == 0:
        return level, draw(_OTHER)
    tag = draw(st.one_of(st.just(level), st.sampled_from([*LEVELS, "x"]), _VALUES))
    return level, {"l": tag, "v": draw(_VALUES), "i": draw(_IDS)}


@settings(
    max_examples=200, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(drawn=_payloads())
def test_any_payload_in_the_cursor_format_is_a_page_or_a_user_input_error(
    stores: dict[str, Storage], drawn: tuple[str, Any]
) -> None:
    level, payload = drawn
    for store in stores.values():
        page_or_user_error(store, level, signed(payload, store))


@settings(max_examples=50, derandomize=True, deadline=None)
@given(seq=st.integers(min_value=0, max_value=2**63 - 1), id_=st.text(min_size=1))
def test_every_key_hymem_can_make_round_trips(seq: int, id_: str) -> None:
    if "\x00" in id_ or any(0xD800 <= ord(c) <= 0xDFFF for c in id_):
        return
    cursors = C.PageCursors()
    assert cursors.decode("turn", USER, cursors.encode("turn", USER, (seq, id_))) == (seq, id_)


def test_rest_answers_a_forged_cursor_with_400(tmp_path: Path) -> None:
    memory: Memory = hashing_memory(tmp_path / "served")
    memory._store.append_turns(make_turns(USER, 3))
    bad = [*FORGED[:3], *(signed(p, store_of(memory)) for p in BAD_PAYLOADS[:3])]
    srv = Served(memory)
    try:
        for cursor in bad:  # unsigned, and signed with bad values
            r = srv.http.get(
                "/v1/memories",
                params={"user_id": USER, "level": "turn", "cursor": cursor},
                headers={"Authorization": "Bearer ka"},
            )
            assert r.status_code == 400, r.text
            assert r.json()["error"] == "UserInputError"
        ok = srv.http.get("/healthz")  # the connection was not reset
        assert ok.status_code == 200
    finally:
        srv.stop()


def test_mcp_answers_a_forged_cursor_with_user_input_error(tmp_path: Path) -> None:
    import anyio
    from hymem.serve.mcp_server import build_mcp_server
    from mcp import Client

    memory: Memory = hashing_memory(tmp_path / "mcp")
    memory._store.append_turns(make_turns(USER, 3))
    server = build_mcp_server(memory, USER)
    bad = [*FORGED[:3], *(signed(p, store_of(memory)) for p in BAD_PAYLOADS[:3])]

    async def texts() -> list[str]:
        out = []
        async with Client(server) as client:
            for cursor in bad:  # unsigned, and signed with bad values
                args = {"level": "turn", "cursor": cursor}
                result = await client.call_tool("list_memories", args)
                assert result.is_error
                out.append(" ".join(getattr(b, "text", "") for b in result.content))
        return out

    try:
        for text in anyio.run(texts):
            assert "UserInputError: " in text and "cursor" in text, text
    finally:
        memory.close()


# --- cursors hymem did not make, though well-formed (signed cursors) ---------------------------
WELL_FORMED = [
    forge({"l": "turn", "v": 5, "i": "' OR 1=1 --"}),
    forge({"l": "turn", "v": 1, "i": "t1"}),  # a key that exists
    forge({"l": "summary", "v": "2024-01-01T00:00:00", "i": "x"}),
    forge({"l": "segment", "v": "2024-01-01T00:00:00+00:00", "i": "seg-1"}),
]


def _levels(cursor: str) -> str:
    """The level a forged cursor names, so it is refused for forgery, not for its level."""
    return str(json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))["l"])


@pytest.mark.parametrize("kind", ["lancedb", "memory"])
@pytest.mark.parametrize("cursor", WELL_FORMED)
def test_a_well_formed_cursor_hymem_did_not_make_is_refused(
    stores: dict[str, Storage], kind: str, cursor: str
) -> None:
    with pytest.raises(UserInputError, match="cursor is not one get_all"):
        editor(stores[kind]).get_all(USER, level=_levels(cursor), status="all", cursor_text=cursor)


def _tampered(real: str) -> list[str]:
    """A real cursor edited: its key moved (signature kept), a character changed, cut short,
    its signature dropped or moved onto another payload."""
    body, dot, tag = real.partition(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    moved = forge({**payload, "v": 0})
    flipped = real[:5] + ("A" if real[5] != "A" else "B") + real[6:]
    return [f"{moved}{dot}{tag}", flipped, real[:-3], body, moved, f"{moved}.{tag[::-1]}"]


def test_a_tampered_real_cursor_is_refused(stores: dict[str, Storage]) -> None:
    for store in stores.values():
        real = editor(store).get_all(USER, level="turn", limit=2).next_cursor
        assert real is not None
        for bad in _tampered(real):
            with pytest.raises(UserInputError):
                editor(store).get_all(USER, level="turn", cursor_text=bad)


def test_a_cursor_is_for_the_user_whose_listing_made_it(stores: dict[str, Storage]) -> None:
    for store in stores.values():
        real = editor(store).get_all(USER, level="turn", limit=2).next_cursor
        assert real is not None
        with pytest.raises(UserInputError):
            editor(store).get_all("mallory", level="turn", cursor_text=real)


def test_rest_refuses_a_well_formed_forged_cursor_and_pages_with_a_real_one(
    tmp_path: Path,
) -> None:
    memory: Memory = hashing_memory(tmp_path / "served")
    memory._store.append_turns(make_turns(USER, 5))
    srv = Served(memory)
    auth = {"Authorization": "Bearer ka"}
    try:
        for cursor in WELL_FORMED[:2]:
            params = {"user_id": USER, "level": "turn", "cursor": cursor}
            r = srv.http.get("/v1/memories", params=params, headers=auth)
            assert r.status_code == 400, r.text
            assert r.json()["error"] == "UserInputError"
        ids, cursor = [], None
        while True:
            params = {"user_id": USER, "level": "turn", "limit": 2}
            r = srv.http.get(
                "/v1/memories",
                params={**params, "cursor": cursor} if cursor else params,
                headers=auth,
            )
            assert r.status_code == 200, r.text
            ids += [t["id"] for t in r.json()["items"]]
            cursor = r.json()["next_cursor"]
            if cursor is None:
                break
        assert ids == [f"t{i}" for i in range(5)]
    finally:
        srv.stop()


def test_a_real_cursor_pages_through_a_second_memory_on_the_same_folder(tmp_path: Path) -> None:
    """Two handles on one folder (a writer, then a reader): the cursor the first returned pages
    the second, which signs with the same key, the store's own."""
    folder = tmp_path / "m"
    with hashing_memory(folder) as first:
        first._store.append_turns(make_turns(USER, 5))
        cursor = first.get_all(user_id=USER, level="turn", limit=2).next_cursor
    with hashing_memory(folder) as second:
        rest = second.get_all(user_id=USER, level="turn", limit=10, cursor=cursor)
    assert [t.id for t in rest.items] == ["t2", "t3", "t4"]


_NEXT_PAGE = """
import sys
from hymem import Memory, MemoryConfig
from hymem.core.errors import UserInputError
from hymem.embed.embedders import HashingEmbedder
config = MemoryConfig(llm="extractive", embedder="hashing")
with Memory(sys.argv[1], config=config, embedder=HashingEmbedder(64), read_only=True) as mem:
    try:
        page = mem.get_all(user_id="alice", level="turn", limit=10, cursor=sys.argv[2])
    except UserInputError as exc:
        print("refused:", exc)
    else:
        print("page:", ",".join(t.id for t in page.items))
"""


def _next_page_elsewhere(folder: Path, cursor: str, secret: str | None = None) -> str:
    """The page after `cursor`, asked by another process (HYMEM_CURSOR_SECRET as given)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("HYMEM_")}
    if secret is not None:
        env["HYMEM_CURSOR_SECRET"] = secret
    run = subprocess.run(
        [sys.executable, "-c", _NEXT_PAGE, str(folder), cursor],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip().splitlines()[-1]


def _first_cursor(folder: Path, secret: str | None = None) -> str:
    """Five turns of alice in a new folder, and the cursor after the first two."""
    from hymem import MemoryConfig
    from hymem.embed.embedders import HashingEmbedder
    from pydantic import SecretStr

    config = MemoryConfig.defaults(
        llm="extractive",
        embedder="hashing",
        cursor_secret=SecretStr(secret) if secret is not None else None,
    )
    with Memory(folder, config=config, embedder=HashingEmbedder(64)) as mem:
        mem._store.append_turns(make_turns(USER, 5))
        cursor = mem.get_all(user_id=USER, level="turn", limit=2).next_cursor
    assert cursor is not None
    return cursor


REFUSED = "refused: cursor is not one get_all"


def test_another_process_on_the_store_accepts_its_cursors_as_after_a_restart(
    tmp_path: Path,
) -> None:
    """The store keeps its own cursor secret: another process (another server on the store,
    or the same one restarted, or the CLI's next `--cursor`) pages on; a process configured
    with another secret refuses the cursor, never misreads it."""
    cursor = _first_cursor(tmp_path / "m")
    assert _next_page_elsewhere(tmp_path / "m", cursor) == "page: t2,t3,t4"
    other = _next_page_elsewhere(tmp_path / "m", cursor, "another secret, 32 chars or more")
    assert other.startswith(REFUSED)


def test_a_configured_cursor_secret_replaces_the_stores_own(tmp_path: Path) -> None:
    secret = "a shared cursor secret of 32+ chars"
    cursor = _first_cursor(tmp_path / "m", secret)
    assert _next_page_elsewhere(tmp_path / "m", cursor, secret) == "page: t2,t3,t4"
    assert _next_page_elsewhere(tmp_path / "m", cursor).startswith(REFUSED)


def test_a_folder_made_before_cursors_were_signed_gets_its_key_from_a_writer(
    tmp_path: Path,
) -> None:
    """Its meta (meta.json and the meta table's copy) without a cursor key: the next writer
    draws one and keeps it in both, and `hymem stats` does not show it."""
    import pyarrow as pa
    from hymem.cli import app
    from hymem.indexes.folder.lock import CURSOR_KEY
    from hymem.indexes.lance import schema as S
    from hymem.indexes.lance.tables import LanceTables
    from typer.testing import CliRunner

    folder = tmp_path / "m"
    _first_cursor(folder)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta.pop(CURSOR_KEY)
    (folder / "meta.json").write_text(json.dumps(meta))
    lance = LanceTables(folder / "lance", read_only=False)
    assert lance.open_existing(S.META)
    rows = [{"key": k, "value": str(v)} for k, v in meta.items()]
    lance.overwrite(S.META, pa.Table.from_pylist(rows, schema=S.meta_schema()))

    cursor = _first_cursor(folder)  # a writer opens it again
    key = json.loads((folder / "meta.json").read_text())[CURSOR_KEY]
    reader = LanceTables(folder / "lance", read_only=True)
    assert reader.open_existing(S.META)
    table = {r["key"]: r["value"] for r in reader.rows(S.META, None)}
    assert len(key) >= 40 and table[CURSOR_KEY] == key
    assert _next_page_elsewhere(folder, cursor).startswith("page: ")

    res = CliRunner().invoke(
        app, ["stats", "-s", str(folder), "--json", "--embedder", "hashing:64"]
    )
    assert res.exit_code == 0, res.output
    assert CURSOR_KEY not in res.output and key not in res.output
