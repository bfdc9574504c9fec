"""`Client` and `AsyncClient`: `Memory`'s methods over HTTP, on httpx.

Like `AsyncMemory`, each method is generated from the `Memory` method of the same name, one line
each (`search = _sync(Memory.search)`): the signature, the docstring and the return type are
`Memory`'s own, so the served API cannot drift from the embedded one, and a call binds its
arguments exactly as `Memory` would. `_Endpoint` holds everything both clients share (route,
request building, response parsing); the two classes differ only in how they wait for I/O.

Reads (`ROUTES[...].read`) answered 503 are tried again, at most `retries` more times, after
the `Retry-After` the server sent (capped by `max_retry_wait`); writes never are, since a 503 may
come after part of the work. The retry loop is tenacity's, in one place per client.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, get_type_hints

import httpx
from hymem.api.memory import Memory
from hymem.client._errors import error_from, retry_after, unreachable
from hymem.client._routes import HEALTH, ROUTES, Outgoing, Route
from hymem.core.errors import ConfigError, HymemError, StoreClosedError
from hymem.core.logging import get_logger
from hymem.core.version import __version__
from pydantic import TypeAdapter, ValidationError
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_result, stop_after_attempt

# Connecting fails fast (a wrong URL, a server that is down); an answer may take long, since
# flush, ask with a model, sleep and erase_user do real work before they answer.
DEFAULT_TIMEOUT = httpx.Timeout(300.0, connect=5.0)
DEFAULT_RETRIES = 3
DEFAULT_MAX_RETRY_WAIT = 30.0  # seconds; a longer Retry-After is cut to this

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
# The logger `Memory` warns on, so one handler sees the warning however the memory is reached.
pending_log = get_logger("hymem.api.memory.pending")


class _Endpoint(Generic[R]):
    """One `Memory` method served over REST: how to ask for it and how to read its answer into
    `R`, the method's return type."""

    def __init__(self, name: str, route: Route, signature: inspect.Signature, returns: Any) -> None:
        self.name = name
        self.route = route
        self.signature = signature
        # `returns` is the method's return annotation, resolved at runtime: the type `R` names.
        self.adapter: TypeAdapter[R] = TypeAdapter(returns)

    @staticmethod
    def of(method: Callable[..., T]) -> _Endpoint[T]:
        name = method.__name__
        hints = get_type_hints(method)
        return _Endpoint(name, ROUTES[name], inspect.signature(method), hints["return"])

    def request(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outgoing:
        return self.route.build(self.signature, args, kwargs)

    def parse(self, response: httpx.Response) -> R:
        if not response.is_success:
            raise error_from(response, f"{self.name}()")
        waiting = response.headers.get("X-Hymem-Pending", "")
        if waiting.isdigit():  # an empty read while turns are pending: warn as Memory does
            pending_log.warning(
                "memory.pending_not_searchable",
                call=self.name,
                pending=int(waiting),
                hint=response.headers.get("X-Hymem-Hint", ""),
            )
        try:
            return self.adapter.validate_json(response.content)
        except ValidationError as exc:  # a server of another hymem version, or not hymem
            raise HymemError(
                f"{self.name}(): the server's answer did not validate: {exc}"
            ) from None


_SELF_ONLY = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)])
_HEALTH: _Endpoint[dict[str, Any]] = _Endpoint("health", HEALTH, _SELF_ONLY, dict[str, Any])


class _Base:
    """Configuration and the retry policy, shared by both clients."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        retries: int,
        max_retry_wait: float,
    ) -> None:
        try:
            url = httpx.URL(base_url) if isinstance(base_url, str) else None
        except httpx.InvalidURL:
            url = None
        if url is None or url.scheme not in ("http", "https") or not url.host:
            raise ConfigError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(retries, int) or retries < 0:
            raise ConfigError(f"retries must be an int >= 0, got {retries!r}")
        self.base_url = str(url).rstrip("/")
        self.retries = retries
        self.max_retry_wait = float(max_retry_wait)
        self._headers = {"User-Agent": f"hymem-client/{__version__}"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._closed = False

    def _policy(self, route: Route) -> dict[str, Any]:
        """tenacity's arguments for one call: 503 answers to reads are retried; the last
        answer is returned either way, and then read as the error it carries."""
        return {
            "retry": retry_if_result(lambda response: response.status_code == 503),
            "stop": stop_after_attempt(1 + (self.retries if route.read else 0)),
            "wait": self._wait,
            "retry_error_callback": lambda state: state.outcome.result(),
            "reraise": True,
        }

    def _wait(self, state: RetryCallState) -> float:
        response = state.outcome.result() if state.outcome else None
        if response is None:
            return 0.0
        return min(retry_after(response, state.attempt_number), self.max_retry_wait)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"this {type(self).__name__} was closed")


def _sync(method: Callable[Concatenate[Memory, P], R]) -> Callable[Concatenate[Client, P], R]:
    """The `Client` method serving `method`: same name, parameters, docstring, return type."""
    endpoint = _Endpoint.of(method)

    def call(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._run(endpoint, args, kwargs)

    functools.update_wrapper(call, method, assigned=("__name__", "__doc__"))  # + __wrapped__
    call.__qualname__ = f"Client.{method.__name__}"
    return call


def _async(
    method: Callable[Concatenate[Memory, P], R],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, R]]:
    """The `AsyncClient` coroutine serving `method` (see `_sync`)."""
    endpoint = _Endpoint.of(method)

    async def call(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._run(endpoint, args, kwargs)

    functools.update_wrapper(call, method, assigned=("__name__", "__doc__"))
    call.__qualname__ = f"AsyncClient.{method.__name__}"
    return call


class Client(_Base):
    """A served memory, with `Memory`'s methods: `Client(url, key)` where code had
    `Memory(path)`. `api_key` is sent as a Bearer token (None for a server in open mode);
    `transport` is an httpx transport, e.g. `httpx.MockTransport` in tests."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, api_key, retries=retries, max_retry_wait=max_retry_wait)
        self._http = httpx.Client(
            base_url=self.base_url, headers=self._headers, timeout=timeout, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections; the server and its memory stay up. Idempotent."""
        self._closed = True
        self._http.close()

    def health(self) -> dict[str, Any]:
        """The server's `/healthz`: `{"status": "ok", "read_only": ...}`."""
        return self._run(_HEALTH, (), {})

    def _run(self, endpoint: _Endpoint[T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
        self._check_open()
        out = endpoint.request(args, kwargs)

        def once() -> httpx.Response:
            try:
                return self._http.request(out.method, out.path, params=out.params, json=out.json)
            except httpx.TransportError as exc:
                raise unreachable(exc, self.base_url, f"{endpoint.name}()") from exc

        return endpoint.parse(Retrying(**self._policy(endpoint.route))(once))

    add = _sync(Memory.add)
    flush = _sync(Memory.flush)
    get_all = _sync(Memory.get_all)
    profile = _sync(Memory.profile)
    audit = _sync(Memory.audit)
    get = _sync(Memory.get)
    update = _sync(Memory.update)
    delete = _sync(Memory.delete)
    history = _sync(Memory.history)
    restore = _sync(Memory.restore)
    search = _sync(Memory.search)
    ask = _sync(Memory.ask)
    context = _sync(Memory.context)
    traces = _sync(Memory.traces)
    replay = _sync(Memory.replay)
    sleep = _sync(Memory.sleep)
    erase_user = _sync(Memory.erase_user)


class AsyncClient(_Base):
    """`Client` for asyncio: the same methods as coroutines, safe to call concurrently from
    one event loop (httpx pools the connections)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, api_key, retries=retries, max_retry_wait=max_retry_wait)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=self._headers, timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections; the server and its memory stay up. Idempotent."""
        self._closed = True
        await self._http.aclose()

    async def health(self) -> dict[str, Any]:
        """The server's `/healthz`: `{"status": "ok", "read_only": ...}`."""
        return await self._run(_HEALTH, (), {})

    async def _run(
        self, endpoint: _Endpoint[T], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> T:
        self._check_open()
        out = endpoint.request(args, kwargs)

        async def once() -> httpx.Response:
            try:
                return await self._http.request(
                    out.method, out.path, params=out.params, json=out.json
                )
            except httpx.TransportError as exc:
                raise unreachable(exc, self.base_url, f"{endpoint.name}()") from exc

        return endpoint.parse(await AsyncRetrying(**self._policy(endpoint.route))(once))

    add = _async(Memory.add)
    flush = _async(Memory.flush)
    get_all = _async(Memory.get_all)
    profile = _async(Memory.profile)
    audit = _async(Memory.audit)
    get = _async(Memory.get)
    update = _async(Memory.update)
    delete = _async(Memory.delete)
    history = _async(Memory.history)
    restore = _async(Memory.restore)
    search = _async(Memory.search)
    ask = _async(Memory.ask)
    context = _async(Memory.context)
    traces = _async(Memory.traces)
    replay = _async(Memory.replay)
    sleep = _async(Memory.sleep)
    erase_user = _async(Memory.erase_user)


__all__ = ["DEFAULT_MAX_RETRY_WAIT", "DEFAULT_RETRIES", "DEFAULT_TIMEOUT", "AsyncClient", "Client"]
