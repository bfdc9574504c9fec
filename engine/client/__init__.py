"""A memory served by `hymem serve`, used as if it were embedded.

    from hymem.client import Client
    mem = Client("http://memory.internal:8000", api_key)   # was: mem = Memory("./memdata")

`Client` has `Memory`'s methods that the REST API serves (add, flush, get_all, get, update,
delete, history, search, ask, context, traces, replay, sleep, erase_user) with the same
parameters and return types, and raises the same `hymem` errors; `AsyncClient` is the `AsyncMemory`
counterpart. Two errors are the client's own: `AuthError` (the key was refused) and
`ServerUnavailable` (the server could not be reached).
"""

from hymem.client._clients import (
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    AsyncClient,
    Client,
)

__all__ = [
    "DEFAULT_MAX_RETRY_WAIT",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "AsyncClient",
    "Client",
]
