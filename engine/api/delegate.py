"""`Memory`'s management methods, generated from `Manager`'s: one line each in the facade
(`get = managed(Manager.get)`) instead of the same signature and docstring written twice."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from hymem.manage.manager import Manager
from hymem.ops.calls import observed

P = ParamSpec("P")
R = TypeVar("R")


class Managing(Protocol):
    """What a generated method needs of the object it is a method of (the `Memory`)."""

    _manager: Manager

    def _check_open(self) -> None: ...


def managed(
    method: Callable[Concatenate[Manager, P], R],
) -> Callable[Concatenate[Managing, P], R]:
    """The `Memory` method of a `Manager` method: same name, parameters and docstring; it
    refuses a closed Memory, then hands the call to the Memory's manager unchanged."""

    def call(self: Managing, /, *args: P.args, **kwargs: P.kwargs) -> R:
        self._check_open()
        return method(self._manager, *args, **kwargs)

    # annotations too: the REST client reads them (get_type_hints, through __wrapped__)
    functools.update_wrapper(call, method, assigned=("__name__", "__doc__", "__annotations__"))
    call.__qualname__ = f"Memory.{method.__name__}"
    return observed(method.__name__)(call)


__all__ = ["Managing", "managed"]
