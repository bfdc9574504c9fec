"""Paging at the largest page size and around it (issue #27, case 1): every level, both stores,
the library, REST and MCP. A page of exactly `MAX_PAGE` records must still say whether another
follows, so paging through returns every record exactly once, whatever the page size."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from hymem.api.memory import Memory
from hymem.core.errors import UserInputError
from hymem.core.types import SegmentRecord, SummaryRecord
from hymem.indexes.paging import MAX_PAGE
from hymem.indexes.ports import Storage
from hymem.manage.editor import Editor
from hymem.manage.models import Page
from hymem.serve.mcp_server import build_mcp_server
from hymem.write.guard import WriteGuard
from mcp import Client

from tests.fixtures_serve import Served, hashing_memory
from tests.fixtures_store import BASE_TIME, StorageKit, make_segment, make_summary, make_turns, vec

pytestmark = pytest.mark.integration

N = MAX_PAGE + 5  # 1,005: one full page and a few more
USER = "alice"


def _segments_and_summaries(n: int) -> tuple[list[SegmentRecord], list[SummaryRecord]]:
    """n segments and n summaries, created a second apart (their page order), cheap vectors."""
    v = vec(1.0)
    segments, summaries = [], []
    for i in range(n):
        created = BASE_TIME + timedelta(seconds=i)
        seg = make_segment(USER, f"seg{i:05d}", "raw", vector=v).model_copy(
            update={"created_at": created}
        )
        segments.append(seg)
        summaries.append(
            make_summary(USER, f"sum{i:05d}", "fact", segment_id=seg.id, created=created, vector=v)
        )
    return segments, summaries


def _fill(store: Storage, n: int) -> None:
    store.append_turns(make_turns(USER, n))
    segments, summaries = _segments_and_summaries(n)
    store.commit_segments(USER, segments, summaries, [])


def _editor(store: Storage, kit: StorageKit) -> Editor:
    # get_all only reads: no write guard is ever asked for.
    return Editor(store, kit.embedder, guard=cast(WriteGuard, None), clock=datetime.now)


def _page_through(fetch: Callable[[str | None], tuple[list[str], str | None]]) -> list[str]:
    ids: list[str] = []
    cursor: str | None = None
    for _ in range(N + 2):
        page, cursor = fetch(cursor)
        ids.extend(page)
        if cursor is None:
            return ids
    raise AssertionError("paging never ended")


@pytest.mark.parametrize("level", ["turn", "segment", "summary"])
@pytest.mark.parametrize("limit", [MAX_PAGE - 1, MAX_PAGE])
def test_every_record_exactly_once_at_and_around_the_largest_page(
    storage_kit: StorageKit, level: str, limit: int
) -> None:
    if storage_kit.kind in ("s3", "lancedb-no-cache"):
        pytest.skip("the lancedb and memory stores cover the page logic; s3 is the same reader")
    store = storage_kit.store
    _fill(store, N)
    editor = _editor(store, storage_kit)

    def fetch(cursor: str | None) -> tuple[list[str], str | None]:
        page = editor.get_all(USER, level=level, status="all", limit=limit, cursor_text=cursor)
        assert len(page.items) <= limit
        return [r.id for r in page.items], page.next_cursor

    ids = _page_through(fetch)
    assert len(ids) == N
    assert len(set(ids)) == N


def test_a_page_of_exactly_the_remaining_records_has_no_cursor(storage_kit: StorageKit) -> None:
    if storage_kit.kind != "memory" and storage_kit.kind != "lancedb":
        pytest.skip("one store of each kind")
    store = storage_kit.store
    store.append_turns(make_turns(USER, MAX_PAGE))
    page = _editor(store, storage_kit).get_all(USER, level="turn", limit=MAX_PAGE)
    assert len(page.items) == MAX_PAGE
    assert page.next_cursor is None


def test_a_page_over_the_largest_is_refused(storage_kit: StorageKit) -> None:
    if storage_kit.kind != "memory":
        pytest.skip("argument checks happen before the store")
    with pytest.raises(UserInputError, match="limit"):
        _editor(storage_kit.store, storage_kit).get_all(USER, level="turn", limit=MAX_PAGE + 1)


@pytest.fixture
def filled_memory(tmp_path: Path) -> Memory:
    memory = hashing_memory(tmp_path / "mem")
    _fill(memory._store, N)
    return memory


@pytest.mark.parametrize("level", ["turn", "segment", "summary"])
def test_rest_pages_through_every_record_at_the_largest_page(
    filled_memory: Memory, level: str
) -> None:
    srv = Served(filled_memory)
    try:

        def fetch(cursor: str | None) -> tuple[list[str], str | None]:
            params: dict[str, Any] = {
                "user_id": USER,
                "level": level,
                "limit": MAX_PAGE,
                "status": "all",
            }
            if cursor is not None:
                params["cursor"] = cursor
            r = srv.http.get("/v1/memories", params=params, headers={"Authorization": "Bearer ka"})
            assert r.status_code == 200, r.text
            body = r.json()
            return [item["id"] for item in body["items"]], body["next_cursor"]

        ids = _page_through(fetch)
    finally:
        srv.stop()
    assert len(ids) == N == len(set(ids))


@pytest.mark.parametrize("level", ["turn", "summary"])
def test_mcp_pages_through_every_record_at_the_largest_page(
    filled_memory: Memory, level: str
) -> None:
    server = build_mcp_server(filled_memory, USER)

    async def run() -> list[str]:
        ids: list[str] = []
        cursor: str | None = None
        async with Client(server) as client:
            for _ in range(N + 2):
                args: dict[str, Any] = {"level": level, "status": "all", "limit": MAX_PAGE}
                if cursor is not None:
                    args["cursor"] = cursor
                result = await client.call_tool("list_memories", args)
                assert not result.is_error, result.content
                content = result.structured_content
                assert isinstance(content, dict)
                page = Page.model_validate(content)
                ids.extend(item.id for item in page.items)
                cursor = page.next_cursor
                if cursor is None:
                    return ids
        raise AssertionError("paging never ended")

    try:
        ids = anyio.run(run)
    finally:
        filled_memory.close()
    assert len(ids) == N == len(set(ids))
