"""Every id the API accepts reaches every route that names it in its path.

A user id such as `team/alice` is accepted by `add` (it travels in the body), so `audit`,
`profile` and `erase_user`, which carry it in the path, must reach the same user: an erasure
that misses the user it was asked to erase leaves the data searchable. Run over a real server
(uvicorn on 127.0.0.1), through the Python clients (sync and async) and with plain httpx, with
ids holding URL-reserved characters: `/`, `?`, `#`, `%`, a space, dot segments, non-ASCII."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hymem.client import AsyncClient, Client
from hymem.core import errors as E

from tests.fixtures_serve import Served, hashing_memory
from tests.node import NODE, needs_node

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


ADMIN = {"Authorization": "Bearer kadmin"}
# Ids the library accepts, each holding something a URL path gives a meaning to.
IDS = [
    "team/alice",
    "a?b=c",
    "a#frag",
    "100%",
    "50%2F50",
    "two words",
    "ünï/名前",
    ".",
    "..",
    "a/../b",
    "x/audit",
    "y/profile/",
    "tab\tand\nnewline",
]
NEIGHBOURS = ["team", "alice", "a", "b"]  # what a mis-split path could reach instead
SAID = "I keep bees on the roof of my flat"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    srv = Served(hashing_memory(tmp_path_factory.mktemp("ids") / "m"))
    try:
        with Client(srv.url, "kadmin") as client:
            for user in NEIGHBOURS:
                client.add("My neighbour keeps bees too", user_id=user)
                client.flush(user_id=user)
        yield srv
    finally:
        srv.stop()


def _neighbours_intact(client: Client) -> None:
    for user in NEIGHBOURS:
        assert client.get_all(user_id=user, level="turn").items, user


@pytest.mark.parametrize("user_id", IDS)
def test_the_client_reaches_every_user_route_and_erasure_removes_the_data(
    served: Served, user_id: str
) -> None:
    with Client(served.url, "kadmin") as client:
        client.add(SAID, user_id=user_id)
        client.flush(user_id=user_id)
        assert client.search("bees roof", user_id=user_id)
        assert [u.user_id for u in client.audit(user_id=user_id).users] == [user_id]
        assert client.profile(user_id=user_id).user_id == user_id
        erased = client.erase_user(user_id)
        assert erased.turns == 1
        assert client.search("bees roof", user_id=user_id) == []
        assert client.get_all(user_id=user_id, level="turn").items == []
        _neighbours_intact(client)


@pytest.mark.parametrize("user_id", IDS)
def test_plain_http_with_the_id_percent_encoded_reaches_the_user(
    served: Served, user_id: str
) -> None:
    http = served.http
    body = {"user_id": user_id, "messages": SAID}
    assert http.post("/v1/memories", json=body, headers=ADMIN).status_code == 200
    segment = quote(user_id, safe="").replace(".", "%2E")  # '.' and '..' are dot segments
    for suffix in ("/audit", "/profile"):
        res = http.get(f"/v1/users/{segment}{suffix}", headers=ADMIN)
        assert res.status_code == 200, res.text
        answer = res.json()
        assert answer.get("user_id", user_id) == user_id
        assert [u["user_id"] for u in answer.get("users", [answer])] == [user_id]
    res = http.delete(f"/v1/users/{segment.replace('%2F', '%2f')}", headers=ADMIN)  # either case
    assert res.status_code == 200, res.text
    assert res.json()["turns"] == 1
    hits = http.post("/v1/search", json={"user_id": user_id, "query": "bees"}, headers=ADMIN)
    assert hits.status_code == 200 and hits.json() == []


def test_a_trailing_slash_is_still_redirected_to_the_route(served: Served) -> None:
    res = served.http.get("/v1/users/alice/audit/", headers=ADMIN)
    assert res.status_code == 307
    assert res.headers["location"].endswith("/v1/users/alice/audit")


def test_a_key_for_one_user_still_cannot_reach_another_through_an_encoded_slash(
    served: Served,
) -> None:
    """`alice`'s key may not act for `alice/x` or `x/alice`: the decoded id is what is checked."""
    for other in ("alice/x", "x/alice", "alice/../bob"):
        res = served.http.get(
            f"/v1/users/{quote(other, safe='')}/audit", headers={"Authorization": "Bearer ka"}
        )
        assert res.status_code == 403, (other, res.text)


def test_the_async_client_reaches_the_same_ids(served: Served) -> None:
    async def run() -> list[tuple[str, int]]:
        out = []
        async with AsyncClient(served.url, "kadmin") as client:
            for user_id in ("team/alice", "..", "a#frag", "ünï/名前"):
                await client.add(SAID, user_id=user_id)
                await client.flush(user_id=user_id)
                audit = await client.audit(user_id=user_id)
                assert [u.user_id for u in audit.users] == [user_id]
                assert (await client.profile(user_id=user_id)).user_id == user_id
                out.append((user_id, (await client.erase_user(user_id)).turns))
                assert await client.search("bees", user_id=user_id) == []
        return out

    assert asyncio.run(run()) == [("team/alice", 1), ("..", 1), ("a#frag", 1), ("ünï/名前", 1)]


def _rename_summaries(export: Path, rename: dict[str, str]) -> None:
    """Give every summary version of an export the id `rename[old]`, links included."""
    lines = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    for rec in lines:
        if rec.get("kind") != "summary":
            continue
        for name in ("id", "memory_id", "previous_id", "superseded_by"):
            if rec.get(name) is not None:
                rec[name] = rename[rec[name]]
    export.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")


def test_record_ids_with_reserved_characters_reach_every_memory_route(
    served: Served, tmp_path: Path
) -> None:
    """Summary ids come from hymem or from an imported file, which may hold any id: one that
    ends in `/history` must still be `get` (not the history of a shorter id), and `history`,
    `update`, `delete` and `restore` must reach it."""
    memory: Any = served.server.config.app.state.hymem.memory
    memory.add(SAID, user_id="src")
    memory.flush(user_id="src")
    export = memory.export(tmp_path / "src.jsonl", user_id="src")
    originals = [s.id for s in memory.get_all(user_id="src", status="all").items]
    assert originals, "the source user has a summary"
    rename = {old: f"m/{i}?#%/history" for i, old in enumerate(originals)}
    _rename_summaries(Path(export.path), rename)
    memory.import_records(export.path, user_id="imported")
    odd = rename[originals[0]]

    with Client(served.url, "kadmin") as client:
        item = client.get(odd, user_id="imported")
        assert item.summary.id == odd
        assert [v.id for v in client.history(odd, user_id="imported")] == [odd]
        with pytest.raises(E.NotFoundError):
            client.get(odd.removesuffix("/history"), user_id="imported")
        new = client.update(odd, "I keep bees on the roof", user_id="imported")
        assert new.memory_id == odd
        versions = [v.id for v in client.history(odd, user_id="imported")]
        assert len(versions) == 2 and odd in versions and new.id in versions
        client.restore(odd, user_id="imported")
        assert client.get(odd, user_id="imported").summary.text == item.summary.text
        deleted = client.delete(odd, user_id="imported")
        assert deleted.status.value == "deleted"
        with pytest.raises(E.NotFoundError):
            client.replay("trace/../x", user_id="imported")


def test_requests_for_such_ids_are_counted_under_their_route_template(served: Served) -> None:
    """The request metrics label a request by the template of the route that answers it."""
    http = served.http
    http.post("/v1/memories", json={"user_id": "metrics/u", "messages": SAID}, headers=ADMIN)
    for _ in range(3):
        assert http.get("/v1/users/metrics%2Fu/audit", headers=ADMIN).status_code == 200
    text = http.get("/metrics", headers=ADMIN).text
    counted = [
        line
        for line in text.splitlines()
        if line.startswith("hymem_http_requests_total{")
        and 'route="/v1/users/{user_id}/audit"' in line
        and 'status="200"' in line
    ]
    assert counted and float(counted[0].rsplit(" ", 1)[1]) >= 3, text
    assert not any('route="unmatched"' in ln and 'status="200"' in ln for ln in text.splitlines())


@needs_node
def test_the_typescript_client_reaches_the_same_ids(served: Served) -> None:
    assert NODE is not None
    run = subprocess.run(
        [NODE, str(ROOT / "tests" / "typescript" / "ids_check.mjs"), served.url, "kadmin"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    for user_id, got in out["reached"].items():
        assert got == {"audit": [user_id], "profile": user_id, "erased": 1, "left": 0}, user_id
    assert len(out["reached"]) == 9
    # fetch folds `.` and `..` (and `%2E`) out of a path: refused before anything is sent,
    # adding included, so the client never stores a user it could not erase
    for user_id, calls in out["refused"].items():
        for call, error in calls.items():
            assert error is not None, (user_id, call)
            assert error["cls"] == "UserInputError" and error["status"] is None, error
            assert "path segment" in error["message"], error
