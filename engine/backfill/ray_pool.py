"""Preparing users on a Ray cluster (`hymem[ray]`): one actor per worker, users streamed.

Each actor builds the store's embedder and model roles once (the embedder travels pickled, its
model reloaded on the worker; an LLM client is built there from the config) and prepares the
users it is handed; the driver commits each result as it arrives (`commit.py`), so a folder
store keeps its one writer and an object store its leases. Ray gives each actor one CPU, and
with it one math-library thread: N actors use N cores instead of fighting over them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from typing import Any

from hymem.backfill.histories import UserHistory
from hymem.backfill.prepare import PreparedUser, Preparer
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError
from hymem.embed.embedders import Embedder
from hymem.llm.roles import Roles

LOCAL = "local"  # start a Ray runtime on this machine (else: an address, or "auto")


class PrepareActor:
    """A Ray actor's state: one `Preparer`. A user that fails comes back as its error (the run
    goes on and reports it); only a lost worker fails the run."""

    def __init__(self, config: MemoryConfig, embedder: Embedder, roles: Roles | None) -> None:
        self._preparer = Preparer(config, embedder, roles=roles)

    def prepare(self, history: UserHistory) -> PreparedUser | tuple[str, str]:
        try:
            return self._preparer.prepare(history)
        except Exception as exc:  # reported per user by the driver
            return history.user_id, f"{type(exc).__name__}: {exc}"


def import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "a backfill on Ray needs the ray package: pip install 'hymem[ray]'"
        ) from exc
    return ray


def prepared_on_ray(
    histories: Iterable[UserHistory],
    *,
    config: MemoryConfig,
    embedder: Embedder,
    roles: Roles | None,
    address: str,
    workers: int,
) -> Iterator[PreparedUser | tuple[str, str]]:
    """Each history prepared on one of `workers` actors, in the order they finish. Connects
    to `address` ("local": a runtime on this machine, shut down afterwards)."""
    ray = import_ray()
    from ray.util import ActorPool

    started = False
    if not ray.is_initialized():
        with warnings.catch_warnings():
            # Ray starts its local processes with subprocess (fork, then exec at once), which
            # LanceDB's fork hook warns about; nothing of LanceDB runs in those children.
            warnings.filterwarnings("ignore", "lancedb fork support", RuntimeWarning)
            if address == LOCAL:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        started = True
    actor_class = ray.remote(num_cpus=1)(PrepareActor)
    actors = [actor_class.remote(config, embedder, roles) for _ in range(workers)]
    try:
        pool = ActorPool(actors)
        yield from pool.map_unordered(lambda actor, h: actor.prepare.remote(h), list(histories))
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()


__all__ = ["LOCAL", "PrepareActor", "import_ray", "prepared_on_ray"]
