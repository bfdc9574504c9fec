"""An object store's write access: one writer per user at a time, by lease (`leases.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hymem.core.errors import ReadOnlyStoreError
from hymem.indexes.objects.leases import LeaseManager
from hymem.indexes.objects.replica_sync import CacheSlot


class LeaseAccess:
    """The `WriteAccess` of an object store. Taking a user's lease that another writer held
    since this one did calls `reload(user)` (see what it committed, settle what it left
    half-done, drop caches) before anything is written."""

    def __init__(
        self,
        leases: LeaseManager | None,
        reload: Callable[[str], None],
        *,
        label: str,
        slot: CacheSlot | None = None,
    ) -> None:
        """`leases=None`: a read-only handle, which holds and writes nothing. `slot`, the
        worker's cache folder, is held as long as the access and released with it."""
        self._leases = leases
        self._reload = reload
        self._label = label
        self._slot = slot

    def _manager(self) -> LeaseManager:
        if self._leases is None:
            raise ReadOnlyStoreError(f"{self._label} was opened read-only")
        return self._leases

    @contextmanager
    def writing(self, user_id: str) -> Iterator[bool]:
        with self._manager().hold(user_id) as lease:
            if lease.stale:
                self._reload(user_id)
            yield lease.stale

    def fence(self, user_id: str) -> None:
        """Hold the user's lease (taken now for a caller that did not use `writing`,
        reloading the user if it changed hands) and extend it by a conditional write, which
        fails with LeaseLostError if another writer took it over meanwhile."""
        leases = self._manager()
        if not leases.holding(user_id):
            lease = leases.acquire(user_id)
            if lease.stale:
                self._reload(user_id)
        leases.fence(user_id)

    def close(self) -> None:
        try:
            if self._leases is not None:
                self._leases.close()  # released now, not left to expire
        finally:
            if self._slot is not None:
                self._slot.release()


__all__ = ["LeaseAccess"]
