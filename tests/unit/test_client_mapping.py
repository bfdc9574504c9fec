"""`hymem.client` without a server: it offers `Memory`'s methods with `Memory`'s parameters,
reaches every REST route, turns each error answer back into the class the server raised, and
retries only reads, only on 503, after the Retry-After it was given (httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, get_type_hints

import httpx
import pytest
from hymem import Filter, Memory
from hymem.client import AsyncClient, Client
from hymem.client._errors import error_from, retry_after
from hymem.core import errors as E
from hymem.serve.errors import http_error
from hymem.serve.routes import router

CLIENT_ONLY = {"close", "aclose", "health"}  # lifecycle and the server's health check

# One valid call per method: enough to build its request.
CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "add": (("hello",), {"user_id": "u"}),
    "flush": ((), {"user_id": "u"}),
    "get_all": ((), {"user_id": "u", "level": "turn", "cursor": "c", "filters": {"a": 1}}),
    "get": (("m1",), {"user_id": "u"}),
    "update": (("m1", "new text"), {"user_id": "u"}),
    "delete": (("m1",), {"user_id": "u"}),
    "history": (("m1",), {"user_id": "u"}),
    "restore": (("v1",), {"user_id": "u"}),
    "profile": ((), {"user_id": "u", "max_tokens": 50}),
    "audit": ((), {"user_id": "u"}),
    "search": (("q",), {"user_id": "u", "since": datetime(2024, 1, 2)}),
    "ask": (("q?",), {"user_id": "u", "depth": "light"}),
    "context": (("q?",), {"user_id": "u"}),
    "traces": ((), {"user_id": "u", "since": datetime(2024, 1, 2)}),
    "replay": (("t1",), {"user_id": "u"}),
    "sleep": ((), {"user_id": "u", "dry_run": True}),
    "erase_user": (("u",), {}),
    "health": ((), {}),
}


def _served_methods(cls: type) -> dict[str, Any]:
    return {
        n: f
        for n, f in inspect.getmembers(cls, callable)
        if not n.startswith("_") and n not in CLIENT_ONLY
    }


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_every_client_method_has_the_parameters_of_the_memory_method(cls: type) -> None:
    methods = _served_methods(cls)
    assert set(methods) == set(CALLS) - {"health"}
    for name, fn in methods.items():
        ours = list(inspect.signature(fn).parameters)[1:]
        theirs = list(inspect.signature(getattr(Memory, name)).parameters)[1:]
        assert ours == theirs, name
        assert fn.__doc__ == getattr(Memory, name).__doc__, name
        assert inspect.iscoroutinefunction(fn) == (cls is AsyncClient), name


def _recorder(seen: list[httpx.Request], answer: httpx.Response | None = None) -> Client:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer or httpx.Response(404, json={"error": "NotFoundError", "message": "x"})

    return Client("http://memory.test", "k", transport=httpx.MockTransport(handle))


def test_every_route_is_reached_by_a_client_method_with_parameters_it_knows() -> None:
    seen: list[httpx.Request] = []
    client = _recorder(seen)
    for name, (args, kwargs) in CALLS.items():
        with pytest.raises(E.HymemError):
            getattr(client, name)(*args, **kwargs)
    reached = set()
    for request in seen:
        path = request.url.raw_path.decode().split("?")[0]
        matches = [
            r for r in router.routes if request.method in r.methods and r.path_regex.match(path)
        ]
        assert len(matches) == 1, (request.method, path)
        route = matches[0]
        reached.add(route.path)
        known = {p.alias for p in route.dependant.query_params}
        assert set(request.url.params) <= known, (route.path, request.url.params)
        if request.content:
            body_model = get_type_hints(route.endpoint)["body"]
            body_model.model_validate(json.loads(request.content))  # the server accepts it
    assert reached == {r.path for r in router.routes}
    assert all(r.headers["authorization"] == "Bearer k" for r in seen)


def test_arguments_travel_as_the_server_reads_them() -> None:
    seen: list[httpx.Request] = []
    client = _recorder(seen)
    with pytest.raises(E.NotFoundError):
        client.search("q", user_id="u", filters=Filter.parse({"topic": "pets"}), k=3)
    with pytest.raises(E.NotFoundError):
        client.traces(user_id="u", since=datetime(2024, 1, 2, 3, 4))
    with pytest.raises(E.NotFoundError):
        client.get("a/../b", user_id="u")
    body = json.loads(seen[0].content)
    assert body == {"user_id": "u", "query": "q", "k": 3, "filters": {"topic": "pets"}}
    assert seen[1].url.params["since"] == "2024-01-02T03:04:00"
    assert seen[2].url.raw_path.startswith(b"/v1/memories/a%2F..%2Fb?")


def test_a_bad_argument_fails_before_anything_is_sent() -> None:
    seen: list[httpx.Request] = []
    client = _recorder(seen)
    with pytest.raises(TypeError):  # as Memory.search would
        client.search("q")  # type: ignore[call-arg]
    with pytest.raises(E.UserInputError, match="k"):
        client.search("q", user_id="u", k="many")  # type: ignore[arg-type]
    with pytest.raises(E.UserInputError, match="mode"):
        client.search("q", user_id="u", mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(E.UserInputError, match="max_workers"):
        client.sleep(user_id="u", max_workers=4)
    with pytest.raises(E.UserInputError, match="memory_id"):
        client.get("", user_id="u")
    assert seen == []
    for bad in ("memory.test", "ftp://memory.test", "", "http://[::1"):
        with pytest.raises(E.ConfigError):
            Client(bad)
    client.close()
    with pytest.raises(E.StoreClosedError):
        client.flush(user_id="u")


def _examples() -> list[E.HymemError]:
    """One instance of every error class in hymem.core.errors, built as the library builds it."""
    out: list[E.HymemError] = []
    for cls in vars(E).values():
        if not (isinstance(cls, type) and issubclass(cls, E.HymemError)):
            continue
        if issubclass(cls, E.NotFoundError):
            out.append(cls("memory", "sum-'quoted' id"))
        elif issubclass(cls, E.InvalidMessageError):
            out.append(cls(2, "no content", message_id="m-7"))
        elif issubclass(cls, E.LLMError):
            out.append(cls("backend down", role="light_answer"))
        else:
            out.append(cls("it failed: here is why"))
    return out


@pytest.mark.parametrize("exc", _examples(), ids=lambda e: type(e).__name__)
def test_every_library_error_comes_back_as_itself(exc: E.HymemError) -> None:
    status, body, headers = http_error(exc)
    back = error_from(httpx.Response(status, json=body, headers=headers), "call()")
    assert type(back) is type(exc) and str(back) == str(exc)
    for attr in ("kind", "record_id", "index", "reason", "message_id", "role"):
        assert getattr(back, attr, None) == getattr(exc, attr, None), attr


def test_answers_that_are_not_hymems_are_still_typed() -> None:
    def answer(status: int, **kw: Any) -> E.HymemError:
        return error_from(httpx.Response(status, **kw), "get()")

    assert type(answer(404, json={"detail": "Not Found"})) is E.HymemError  # a wrong base URL
    assert isinstance(answer(502, text="<html>bad gateway</html>"), E.ServerUnavailable)
    assert isinstance(answer(401, json={"error": "Unauthorized", "message": "key"}), E.AuthError)
    forbidden = answer(403, json={"error": "Forbidden", "message": "not that user"})
    assert isinstance(forbidden, E.AuthError) and forbidden.status_code == 403
    invalid = answer(
        422,
        json={
            "error": "RequestValidationError",
            "message": "invalid request",
            "detail": [{"loc": ["query", "user_id"], "msg": "Field required"}],
        },
    )
    assert isinstance(invalid, E.UserInputError) and "user_id: Field required" in str(invalid)


@pytest.mark.parametrize(
    "fault",
    [httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("eh")],
)
def test_transport_failures_are_server_unavailable(fault: Exception) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        raise fault

    client = Client("http://memory.test", transport=httpx.MockTransport(handle))
    with pytest.raises(E.ServerUnavailable, match=r"memory\.test") as caught:
        client.search("q", user_id="u")
    assert isinstance(caught.value, E.StoreError)


def _flaky(unavailable: int, retry_after_s: str = "0") -> tuple[Callable[..., Any], list[str]]:
    """A handler answering 503 `unavailable` times, then a valid search answer."""
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if len(seen) <= unavailable:
            body = {"error": "LLMUnavailable", "message": "[light_answer] down"}
            return httpx.Response(503, json=body, headers={"Retry-After": retry_after_s})
        if request.url.path == "/v1/search":
            return httpx.Response(200, json=[])
        return httpx.Response(200, json={"turn_ids": [], "pending": 0})

    return handle, seen


def test_reads_are_retried_on_503_and_writes_are_not() -> None:
    handle, seen = _flaky(2)
    client = Client("http://memory.test", transport=httpx.MockTransport(handle), retries=2)
    assert client.search("q", user_id="u") == [] and len(seen) == 3
    handle, seen = _flaky(5)
    client = Client("http://memory.test", transport=httpx.MockTransport(handle), retries=2)
    with pytest.raises(E.LLMUnavailable) as caught:
        client.search("q", user_id="u")
    assert len(seen) == 3 and caught.value.role == "light_answer"
    handle, seen = _flaky(1)
    client = Client("http://memory.test", transport=httpx.MockTransport(handle), retries=2)
    with pytest.raises(E.LLMUnavailable):
        client.add("hello", user_id="u")
    assert len(seen) == 1


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    handle, seen = _flaky(1, retry_after_s="3600")
    client = Client(
        "http://memory.test", transport=httpx.MockTransport(handle), max_retry_wait=0.01
    )
    assert client.search("q", user_id="u") == [] and len(seen) == 2  # waited 0.01 s, not 1 h
    assert retry_after(httpx.Response(503, headers={"Retry-After": "7"}), 1) == 7
    date = "Wed, 21 Oct 2015 07:28:00 GMT"  # in the past: no wait
    assert retry_after(httpx.Response(503, headers={"Retry-After": date}), 1) == 0
    assert retry_after(httpx.Response(503), 3) == 2.0


def test_the_async_client_retries_the_same_way() -> None:
    handle, seen = _flaky(2)

    async def main() -> list[Any]:
        transport = httpx.MockTransport(handle)
        async with AsyncClient("http://memory.test", transport=transport, retries=2) as client:
            return await client.search("q", user_id="u")

    assert asyncio.run(main()) == [] and len(seen) == 3


def test_every_parameter_sent_in_a_query_string_is_one_its_route_reads() -> None:
    """FastAPI ignores an unknown query parameter, so a `Memory` parameter a GET route lacks
    would be dropped silently: every one must be a query parameter of its route."""
    from hymem.client._routes import ROUTES

    for name, route in ROUTES.items():
        if route.body is not None:
            continue  # a body the request model does not know is refused before sending
        path = route.path.format(**dict.fromkeys(route.path_params, "x"))
        served = next(
            r for r in router.routes if r.path_regex.match(path) and route.method in r.methods
        )
        params = set(inspect.signature(getattr(Memory, name)).parameters) - {"self"}
        known = {p.alias for p in served.dependant.query_params}
        assert params - set(route.path_params) <= known, name
