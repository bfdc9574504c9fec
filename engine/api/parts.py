"""The components one `Memory` is made of, each built with exactly what it uses
(`build_parts`): the ingestor, the reader, the consolidator, automatic sleep and the `Manager`
with its editor and backfill. Every writer among them shares one `WriteGuard`; none holds the
Memory (automatic sleep is handed the facade's own sleep call, so its webhook event is sent)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hymem.backfill.runner import Backfill
from hymem.core.config import MemoryConfig
from hymem.core.time import utcnow
from hymem.embed.embedders import Embedder
from hymem.indexes.ports import Storage
from hymem.llm import LazyRoles
from hymem.manage.editor import Editor
from hymem.manage.manager import Manager
from hymem.read.reader import Reader
from hymem.search.hybrid import HybridSearcher
from hymem.sleep.auto import AutoSleep
from hymem.sleep.consolidator import Consolidator
from hymem.sleep.journal import SleepJournal
from hymem.write.guard import WriteGuard
from hymem.write.ingestor import Ingestor


@dataclass(frozen=True, slots=True)
class Parts:
    """What `Memory` hands each call to."""

    guard: WriteGuard
    ingestor: Ingestor
    reader: Reader
    consolidator: Consolidator
    auto_sleep: AutoSleep
    manager: Manager


def build_parts(
    store: Storage,
    embedder: Embedder,
    searcher: HybridSearcher,
    roles: LazyRoles,
    config: MemoryConfig,
    *,
    journal: SleepJournal,
    sleep: Callable[[str], object],
) -> Parts:
    """Each component, built with exactly what it uses; every writer shares one guard.
    `sleep(user_id)` is what automatic sleep calls."""
    parts = (store, embedder)
    guard = WriteGuard(store)
    ingestor = Ingestor(*parts, roles, config, clock=utcnow, guard=guard)
    reader = Reader(*parts, searcher, roles, config, clock=utcnow)
    consolidator = Consolidator(*parts, roles, config, journal=journal, clock=utcnow, guard=guard)
    auto_sleep = AutoSleep(config.auto_sleep_after, sleep)
    manager = Manager(
        *parts,
        config,
        guard=guard,
        editor=Editor(*parts, guard=guard, clock=utcnow, cursor_secret=config.cursor_secret),
        consolidator=consolidator,
        ingestor=ingestor,
        reader=reader,
        auto_sleep=auto_sleep,
        backfill=Backfill(*parts, config, guard=guard, ingestor=ingestor, roles=roles.given),
    )
    return Parts(guard, ingestor, reader, consolidator, auto_sleep, manager)


__all__ = ["Parts", "build_parts"]
