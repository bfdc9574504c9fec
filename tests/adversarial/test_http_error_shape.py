"""One error shape over HTTP (issue #27, case 8): every error answer of the REST server is
`{"error", "message"}` with a documented status, the client maps each to a hymem error, and
request fields are as strict as the library's (over REST and MCP). Ends with the API fuzzed
from its own OpenAPI schema, hymem's error shape the oracle."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from hymem.client import Client
from hymem.client._errors import error_from
from hymem.core.errors import HymemError, UserInputError
from hymem.serve.app import create_app
from hymem.serve.auth import KeyRing
from hymem.serve.errors import ERROR_STATUSES
from hymem.serve.mcp_server import build_mcp_server
from mcp import Client as MCPClient

from tests.fixtures_serve import SERVE_KEYS, Served, hashing_memory

pytestmark = pytest.mark.integration

ALICE = {"Authorization": "Bearer ka"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    srv = Served(hashing_memory(tmp_path_factory.mktemp("shape") / "served"))
    try:
        yield srv
    finally:
        srv.stop()


def assert_shape(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert isinstance(body, dict)
    assert isinstance(body.get("error"), str) and isinstance(body.get("message"), str), body
    return body


def nested(depth: int) -> bytes:
    return b'{"user_id": "alice", "query": "x", "k": ' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.parametrize(
    "raw",
    [
        nested(5_000),
        nested(100_000),
        b'{"user_id": "alice", "query": "\xff\xfe"}',
        b'{"user_id": "alice", "query": "x", "k": ' + b"9" * 5_000 + b"}",
        b'{"user_id": "alice", "query": ',
        b"",
    ],
    ids=["deep-5000", "deep-100000", "bad-utf8", "5000-digits", "truncated", "empty"],
)
def test_malformed_bodies_are_422_in_hymem_shape(served: Served, raw: bytes) -> None:
    r = served.http.post(
        "/v1/search", content=raw, headers={**ALICE, "Content-Type": "application/json"}
    )
    assert assert_shape(r, 422)["error"] == "RequestValidationError"


def test_an_unknown_route_and_method_have_the_shape(served: Served) -> None:
    assert assert_shape(served.http.get("/v1/nowhere", headers=ALICE), 404)["error"] == (
        "RouteNotFound"
    )
    assert assert_shape(served.http.put("/v1/search", headers=ALICE), 405)["error"] == (
        "MethodNotAllowed"
    )


@pytest.mark.parametrize("k", ["5", 5.0, True, None, [5]])
def test_rest_counts_are_json_integers(served: Served, k: Any) -> None:
    body = {"user_id": "alice", "query": "x", "k": k}
    r = served.http.post("/v1/search", json=body, headers=ALICE)
    assert assert_shape(r, 422)["error"] == "RequestValidationError"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/ask", {"user_id": "alice", "question": "q", "N": "3"}),
        ("/v1/ask", {"user_id": "alice", "question": "q", "max_iterations": 1.0}),
        ("/v1/search", {"user_id": "alice", "query": "q", "include_inactive": "yes"}),
        ("/v1/search", {"user_id": "alice", "query": "q", "include_inactive": 1}),
        ("/v1/sleep", {"user_id": "alice", "dry_run": "true"}),
    ],
)
def test_rest_other_typed_fields_are_strict(
    served: Served, path: str, body: dict[str, Any]
) -> None:
    assert assert_shape(served.http.post(path, json=body, headers=ALICE), 422)


def test_the_client_maps_each_answer_to_a_hymem_error(served: Served) -> None:
    deep = served.http.post(
        "/v1/search", content=nested(5_000), headers={**ALICE, "Content-Type": "application/json"}
    )
    assert isinstance(error_from(deep, "search"), UserInputError)
    route = served.http.get("/v1/nowhere", headers=ALICE)
    err = error_from(route, "x")
    assert "/v1/nowhere" in str(err) and "not an answer of a hymem server" not in str(err)


def test_the_client_refuses_a_count_the_library_refuses(served: Served) -> None:
    with Client(served.url, api_key="ka") as client, pytest.raises(HymemError):
        client.search("x", user_id="alice", k="5")  # type: ignore[arg-type]  # the test's point


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("search_memory", {"query": "x", "k": "5"}),
        ("search_memory", {"query": "x", "k": 5.0}),
        ("search_memory", {"query": "x", "k": True}),
        ("list_memories", {"limit": "10"}),
        ("list_memories", {"limit": True}),
        ("search_memory", {"query": "x", "include_inactive": "true"}),
    ],
)
def test_mcp_arguments_are_as_strict_as_the_library(
    tmp_path: Path, tool: str, args: dict[str, Any]
) -> None:
    memory = hashing_memory(tmp_path / "mcp")
    server = build_mcp_server(memory, "alice")

    async def call() -> bool:
        async with MCPClient(server) as client:
            result = await client.call_tool(tool, args)
            return bool(result.is_error)

    try:
        assert anyio.run(call), f"{tool} accepted {args}"
    finally:
        memory.close()


def test_every_error_status_is_documented(served: Served) -> None:
    schema = served.http.get("/openapi.json").json()
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            documented = {int(c) for c in op["responses"] if c.isdigit()}
            missing = set(ERROR_STATUSES) - documented
            assert not missing, (method, path, missing)
            err = op["responses"]["422"]["content"]["application/json"]["schema"]
            assert "ErrorBody" in json.dumps(err), (method, path)


# --- the API fuzzed from its own OpenAPI schema ----------------------------------------------
schemathesis = pytest.importorskip("schemathesis")


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    memory = hashing_memory(tmp_path_factory.mktemp("fuzz") / "served")
    app = create_app(memory, KeyRing.from_env(SERVE_KEYS), close_on_shutdown=False)
    yield app
    memory.close()


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_the_api_fuzzed_from_its_schema_answers_in_hymem_shape(fuzz_app: Any, mode: str) -> None:
    """Valid requests ("positive") and requests that break the schema ("negative")."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Unsatisfiable
    from starlette.testclient import TestClient

    schema = schemathesis.openapi.from_asgi("/openapi.json", fuzz_app)
    problems: list[str] = []
    calls: list[int] = []
    documented: set[int] = set()
    with TestClient(fuzz_app, raise_server_exceptions=False) as http:
        for op_result in schema.get_all_operations():
            op = op_result.ok()
            strategy = op.as_strategy(schemathesis.GenerationMode(mode))
            # the statuses this operation's schema documents, nothing else
            documented.clear()
            documented.update(int(c) for c in op.definition.raw["responses"] if c.isdigit())

            @settings(
                max_examples=8,
                derandomize=True,
                deadline=None,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy)
            def check(case: Any) -> None:
                kwargs = case.as_transport_kwargs(base_url="http://testserver")
                headers = {**(kwargs.get("headers") or {}), **ALICE}
                kwargs["headers"] = headers
                kwargs.pop("base_url", None)
                url = kwargs.pop("url")
                method = kwargs.pop("method")
                r = http.request(method, url, **kwargs)
                calls.append(r.status_code)
                where = f"{method} {url}: {r.status_code} {r.text[:200]}"
                if r.status_code >= 500 or r.status_code not in documented:
                    problems.append(where)
                elif r.status_code != 200:
                    body = r.json()
                    if not (isinstance(body, dict) and {"error", "message"} <= body.keys()):
                        problems.append(where)

            try:
                check()
            except Unsatisfiable:  # nothing to break in an operation without parameters
                assert mode == "negative"
    assert len(calls) >= 15 * 3, len(calls)  # every operation, several cases each
    assert not problems, problems[:10]
