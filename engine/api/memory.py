"""`Memory`: the facade users hold. It owns the store and the model, checks each call's
arguments into typed values (`hymem.search.scope`, `hymem.read.params`, `hymem.write.request`)
and hands it to the component that implements it (ingestor, searcher, reader, consolidator, and
the `Manager`, whose methods it exposes as generated one-line delegations). `__init__` alone
knows all the parts and builds each with exactly what it uses; none holds the Memory."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from hymem.api.delegate import managed
from hymem.api.deprecated import DeprecatedParts
from hymem.api.memory_args import (
    exc_free,
    open_storage,
    store_location,
    warn_if_pending,
    with_flush,
)
from hymem.api.memory_args import with_overrides as _with_overrides
from hymem.api.parts import build_parts
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError, StoreClosedError
from hymem.core.filters import Filter
from hymem.core.logging import get_logger
from hymem.core.types import AddResult, Answer, Hit, Level
from hymem.core.validation import check_k, check_store_path, check_user_id
from hymem.embed.embedders import Embedder, resolve_embedder
from hymem.indexes.ports import Storage
from hymem.llm import LazyRoles
from hymem.llm.cache import cache_owner
from hymem.llm.roles import Roles
from hymem.manage.manager import Manager
from hymem.ops.calls import Observers, observed
from hymem.ops.webhooks.observer import open_webhooks, webhook_outbox
from hymem.read.params import ask_params
from hymem.read.scheduler import Depth
from hymem.search.hybrid import HybridSearcher, SearchMode
from hymem.sleep.consolidator import SleepReport
from hymem.sleep.journal import SleepJournal
from hymem.write.request import add_request

log = get_logger("hymem.api.memory")


class Memory(DeprecatedParts):
    """Long-term conversational memory under one folder.

    Opening is cheap: models load lazily on first use. One process may write a folder at a
    time (a second writer gets StoreLockedError); pass read_only=True to share it for reads.
    A folder holding no memory is made one only inside an existing folder (`create=None`);
    `create=True` makes missing folders too, `create=False` needs an existing memory.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        llm: str | None = None,
        embedder: str | Embedder | None = None,
        config: MemoryConfig | None = None,
        read_only: bool = False,
        roles: Roles | None = None,
        storage_options: Mapping[str, str] | None = None,
        create: bool | None = None,
    ) -> None:
        self.config = config = _with_overrides(config, llm=llm, embedder=embedder)
        self._observers = Observers()
        self.location = location = store_location(check_store_path(path), storage_options, config)
        self.path: Path | str = location.uri if location.remote else Path(location.uri)
        self._embedder: Embedder = (
            embedder
            if embedder is not None and not isinstance(embedder, str)
            else resolve_embedder(config.embedder, batch_size=config.embed_batch_size)
        )
        outbox = webhook_outbox(config, location, read_only=read_only)  # ConfigError first
        self._store: Storage = open_storage(
            location, self._embedder, config, create=create, read_only=read_only
        )
        try:
            self._webhooks = open_webhooks(config, outbox)
        except BaseException:
            self._store.close()
            raise
        self._roles = LazyRoles(config, self._embedder, given=roles)
        self._searcher = HybridSearcher.from_config(self._store, self._embedder, config)
        parts = build_parts(
            self._store,
            self._embedder,
            self._searcher,
            self._roles,
            config,
            journal=SleepJournal(self._store.sleep_log()),
            sleep=lambda user_id: self.sleep(user_id=user_id),  # observed: its webhook event too
        )
        self._guard, self._ingestor, self._reader = parts.guard, parts.ingestor, parts.reader
        self._consolidator, self._auto_sleep = parts.consolidator, parts.auto_sleep
        self._manager = parts.manager
        self._closed = False
        if self._webhooks is not None:  # last: rows a crashed process left go out now
            self._observers.add(self._webhooks)
            self._webhooks.start()
        opened = {"llm": config.llm, "embedder": self._embedder.name, "read_only": read_only}
        log.info("memory.open", path=str(self.path), **opened)

    # --- lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        try:
            if self.config.sleep_on_close and not self._store.read_only and exc_free():
                self.sleep()
        finally:
            self._closed = True
            # Every part is closed even if one fails. ExitStack runs them last-in first-out:
            # components first (the reader drains its trace thread into the store), then the
            # searcher's threads and the roles, the store last.
            with ExitStack() as parts:
                parts.callback(self._store.close)
                if self._webhooks is not None:  # undelivered events wait for the next open
                    parts.callback(self._webhooks.close)
                parts.callback(self._roles.close)
                parts.callback(self._searcher.close)
                parts.callback(self._consolidator.close)
                parts.callback(self._reader.close)
                parts.callback(self._ingestor.close)
            log.info("memory.close", path=str(self.path))

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this Memory was closed")

    @property
    def observers(self) -> Observers:
        """Who is told of each finished public call (`hymem.ops.calls.Observer`): the serve
        app's Prometheus metrics, the webhook outbox, or an application's own."""
        return self._observers

    @property
    def read_only(self) -> bool:
        """Whether this Memory was opened for reads only (writes raise ReadOnlyStoreError)."""
        self._check_open()
        return self._store.read_only

    # --- write path ----------------------------------------------------------------------
    @observed("add")
    def add(
        self,
        messages: Sequence[dict[str, Any]] | dict[str, Any] | str,
        *,
        user_id: str,
        session_id: str = "default",
        timestamp: str | datetime | None = None,
        metadata: Mapping[str, str | int | float | bool] | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        request_id: str | None = None,
    ) -> AddResult:
        """Persist messages as pending turns, then flush the short-term buffer if it is full.
        A plain string is one message `{"role": "user", "content": text}`.

        `metadata` (str/int/float/bool values) and the `agent_id` / `run_id` scopes are kept
        on every turn and inherited by the segments and summaries made from them; `filters=`
        on search, ask and context select by them. Turns still pending (`AddResult.pending`)
        are not searchable until flushed (`MemoryConfig.flush_on_add` flushes every add).

        `request_id` names this call (a UUID, say) so that sending it again, after a timeout
        or an outage, stores nothing twice: the retry returns the first call's turn ids. The
        same id with other messages is a `UserInputError`. Without it (or message ids), every
        call is new: the same words said twice are two turns."""
        self._check_open()
        request = add_request(
            messages,
            user_id=user_id,
            session_id=session_id,
            timestamp=timestamp,
            metadata=metadata,
            agent_id=agent_id,
            run_id=run_id,
            request_id=request_id,
        )
        with cache_owner(user_id):
            result = self._ingestor.add(request)
            if self.config.flush_on_add and result.pending and result.error is None:
                result = with_flush(result, self._ingestor.flush(user_id=user_id))
        self._auto_sleep.after_store(user_id, result)
        return result

    @observed("flush")
    def flush(self, *, user_id: str) -> AddResult:
        """Summarise and store every pending turn of `user_id` now."""
        self._check_open()
        check_user_id(user_id)
        with cache_owner(user_id):
            result = self._ingestor.flush(user_id=user_id)
        self._auto_sleep.after_store(user_id, result)
        return result

    # --- read path -----------------------------------------------------------------------
    @observed("search")
    def search(
        self,
        query: str,
        *,
        user_id: str,
        k: int = 10,
        level: Level | str = Level.SUMMARY,
        mode: SearchMode = "hybrid",
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        include_inactive: bool = False,
        as_of: datetime | str | None = None,
        filters: Mapping[str, Any] | Filter | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[Hit]:
        """Model-free hybrid retrieval (dense + BM25 fused by reciprocal rank). `as_of` bounds
        the search like `until`: nothing timestamped after it is returned. `filters` (and the
        agent_id / run_id shortcuts) keep hits whose metadata matches (`hymem.Filter`)."""
        self._check_open()
        hits = self._searcher.search(  # checks the arguments: `hymem.search.scope`
            query,
            user_id=user_id,
            k=k,
            level=level,
            mode=mode,
            since=since,
            until=until,
            include_inactive=include_inactive,
            as_of=as_of,
            filters=filters,
            agent_id=agent_id,
            run_id=run_id,
        )
        if not hits:  # counted only then: hits cost nothing extra
            warn_if_pending(self._ingestor, user_id, "search")
        return hits

    @observed("ask")
    def ask(
        self,
        question: str,
        *,
        user_id: str,
        depth: Depth = "auto",
        k: int | None = None,
        N: int | None = None,
        d: int | None = None,
        max_iterations: int | None = None,
        as_of: datetime | str | None = None,
        filters: Mapping[str, Any] | Filter | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Answer:
        """Answer from summaries; escalate to raw dialogue when the light path says it must.

        `as_of` is the moment the question is asked (default: now, unbounded): memories
        timestamped after it are not retrieved, and a model reads the question's relative
        expressions ("last week") against it. It is recorded on the Answer and the trace.
        `filters`, agent_id and run_id restrict every retrieval of the ask (as in `search`)."""
        self._check_open()
        params = ask_params(
            question,
            user_id=user_id,
            config=self.config,
            depth=depth,
            k=k,
            N=N,
            d=d,
            max_iterations=max_iterations,
            as_of=as_of,
            filters=filters,
            agent_id=agent_id,
            run_id=run_id,
        )
        with cache_owner(user_id):
            answer = self._reader.ask(params)
        if not answer.evidence:
            warn_if_pending(self._ingestor, user_id, "ask")
        return answer

    @observed("context")
    def context(
        self,
        question: str,
        *,
        user_id: str,
        depth: Depth = "light",
        as_of: datetime | str | None = None,
        filters: Mapping[str, Any] | Filter | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[Hit]:
        """The context a path would assemble, for callers who bring their own answering model
        (`as_of` and `filters` as for `ask`)."""
        self._check_open()
        params = ask_params(
            question,
            user_id=user_id,
            config=self.config,
            depth=depth,
            as_of=as_of,
            filters=filters,
            agent_id=agent_id,
            run_id=run_id,
        )
        with cache_owner(user_id):
            hits = self._reader.context(params)
        if not hits:
            warn_if_pending(self._ingestor, user_id, "context")
        return hits

    # --- sleep time ----------------------------------------------------------------------
    @observed("sleep")
    def sleep(
        self,
        *,
        user_id: str | None = None,
        max_workers: int | None = None,
        dry_run: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> SleepReport:
        """Consolidate the summary tier offline; returns a SleepReport. `progress(phase,
        done, total)` follows its phases ("queues", "decisions", "apply")."""
        self._check_open()
        if user_id is not None:
            check_user_id(user_id)
        if max_workers is not None:
            check_k(max_workers, name="max_workers")
        return self._consolidator.sleep(
            user_id=user_id,
            max_workers=self.config.sleep_workers if max_workers is None else max_workers,
            dry_run=dry_run,
            progress=progress,
        )

    # --- management: generated delegations (`managed`) -----------------------------------
    history = managed(Manager.history)
    restore = managed(Manager.restore)
    get = managed(Manager.get)
    get_all = managed(Manager.get_all)
    profile = managed(Manager.profile)
    audit = managed(Manager.audit)
    update = managed(Manager.update)
    delete = managed(Manager.delete)
    erase_user = managed(Manager.erase_user)
    export = managed(Manager.export)
    import_records = managed(Manager.import_records)
    backfill = managed(Manager.backfill)
    import_chat = managed(Manager.import_chat)
    stats = managed(Manager.stats)
    pending = managed(Manager.pending)
    traces = managed(Manager.traces)
    replay = managed(Manager.replay)
    users = managed(Manager.users)
    reindex = managed(Manager.reindex)
    optimize = managed(Manager.optimize)
    refresh = managed(Manager.refresh)


__all__ = ["ConfigError", "Memory"]
