"""Forged page cursors (issue #27, case 4): any cursor hymem did not make is a UserInputError
(400 over REST), never LanceDB's raw ValueError / UnicodeEncodeError. Checked on both stores
with the cursors of the issue, and as properties: any string, and any payload in the cursor's
own format, gives a valid page or a UserInputError."""

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
from hymem.indexes.protocol import Storage
from hymem.manage import cursor as C
from hymem.manage.editor import Editor
from hymem.write.guard import WriteGuard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures_serve import Served, hashing_memory
from tests.fixtures_store import DIM, make_turns, open_store

USER = "alice"
LEVELS = ["turn", "segment", "summary"]


def forge(payload: Any) -> str:
    raw = json.dumps(payload, ensure_ascii=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


FORGED = [
    forge({"l": "turn", "v": 10**30, "i": "t0"}),
    forge({"l": "turn", "v": -(10**30), "i": "t0"}),
    forge({"l": "turn", "v": 2**63, "i": "t0"}),
    forge({"l": "turn", "v": -1, "i": "t0"}),
    forge({"l": "turn", "v": 3, "i": "\ud800"}),
    forge({"l": "summary", "v": "2024-01-01T00:00:00", "i": "\udfff"}),
    forge({"l": "summary", "v": "0001-01-01T00:00:00+14:00", "i": "x"}),
    forge({"l": "summary", "v": "9999-12-31T23:59:59-14:00", "i": "x"}),
    forge({"l": "segment", "v": "2024-01-01", "i": ""}),
    forge(json.loads("[" * 60 + "]" * 60)),
    base64.urlsafe_b64encode(b"[" * 1500).decode(),
    "\ud800",
    "%%%",
    "",
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
@pytest.mark.parametrize("cursor", FORGED)
@pytest.mark.parametrize("level", LEVELS)
def test_a_forged_cursor_is_a_user_input_error(
    stores: dict[str, Storage], kind: str, cursor: str, level: str
) -> None:
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
        page_or_user_error(store, level, forge(payload))


@settings(max_examples=50, derandomize=True, deadline=None)
@given(seq=st.integers(min_value=0, max_value=2**63 - 1), id_=st.text(min_size=1))
def test_every_key_hymem_can_make_round_trips(seq: int, id_: str) -> None:
    if "\x00" in id_ or any(0xD800 <= ord(c) <= 0xDFFF for c in id_):
        return
    assert C.decode("turn", C.encode("turn", (seq, id_))) == (seq, id_)


def test_rest_answers_a_forged_cursor_with_400(tmp_path: Path) -> None:
    memory: Memory = hashing_memory(tmp_path / "served")
    memory._store.append_turns(make_turns(USER, 3))
    srv = Served(memory)
    try:
        for cursor in FORGED[:6]:
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

    async def texts() -> list[str]:
        out = []
        async with Client(server) as client:
            for cursor in FORGED[:6]:
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
