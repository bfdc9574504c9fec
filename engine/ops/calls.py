"""Every public `Memory` call as one span and one `CallRecord` handed to the observers.

Observers (Prometheus metrics, the webhook outbox) see what each call returned or raised once
it ends, on the calling thread. They never change a call's outcome: an observer that raises is
logged (`observer.failed`) and the caller still gets its result or its own exception.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from hymem.core.logging import get_logger
from hymem.core.tracing import span, user_attributes

log = get_logger("hymem.ops.calls")

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class CallRecord:
    """One finished public call: its name (`"ask"`, `"flush"`, `"erase_user"`, ...), the user
    it was scoped to, how long it took, and its result or the exception it raised."""

    name: str
    user_id: str | None
    seconds: float
    result: Any = None
    error: BaseException | None = None
    kwargs: dict[str, Any] | None = None


class Observer(Protocol):
    def observe(self, call: CallRecord) -> None: ...


class Observers:
    """The observers of one Memory; safe to add to while calls run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: tuple[Observer, ...] = ()

    def add(self, observer: Observer) -> None:
        with self._lock:
            self._items = (*self._items, observer)

    def remove(self, observer: Observer) -> None:
        with self._lock:
            self._items = tuple(o for o in self._items if o is not observer)

    def __len__(self) -> int:
        return len(self._items)

    def notify(self, call: CallRecord) -> None:
        for observer in self._items:
            try:
                observer.observe(call)
            except Exception as exc:  # an observer's bug must not fail the user's call
                log.error("observer.failed", observer=type(observer).__name__, error=repr(exc))


class Observed(Protocol):
    """What `observed` needs of the object whose methods it wraps (the Memory)."""

    _observers: Observers

    @property
    def config(self) -> Any: ...


def observed(
    name: str,
) -> Callable[[Callable[Concatenate[Any, P], R]], Callable[Concatenate[Any, P], R]]:
    """Wrap a public method in a `hymem.<name>` span and report it to the observers."""

    def wrap(method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
        @functools.wraps(method)
        def call(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
            user_id = kwargs.get("user_id")
            user = user_id if isinstance(user_id, str) else None
            config = self.config
            key = config.telemetry_hash_key
            attributes = {
                "hymem.operation": name,
                **user_attributes(
                    user, config.telemetry_user_ids, key.get_secret_value() if key else None
                ),
            }
            started = time.perf_counter()
            error: BaseException | None = None
            result: R | None = None  # for the observers: None when the call raised
            try:
                with span(f"hymem.{name}", attributes):
                    value = method(self, *args, **kwargs)
                result = value
                return value
            except BaseException as exc:
                error = exc
                raise
            finally:
                observers: Observers = self._observers
                if len(observers):
                    record = CallRecord(
                        name, user, time.perf_counter() - started, result, error, dict(kwargs)
                    )
                    observers.notify(record)

        return call

    return wrap


__all__ = ["CallRecord", "Observed", "Observer", "Observers", "observed"]
