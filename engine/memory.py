"""`Memory`: the facade users hold. It validates arguments, owns the store and the model, and
hands each operation to the module that implements it (ingest, reader, consolidate)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import structlog
from hymem.config import MemoryConfig
from hymem.embedders import Embedder, resolve_embedder
from hymem.errors import ConfigError, StoreClosedError, UserInputError
from hymem.indexes.hybrid import HybridSearcher, SearchMode
from hymem.indexes.store import Store
from hymem.llm import build_roles
from hymem.llm.roles import Roles
from hymem.types import AddResult, Answer, Hit, Level, SummaryRecord, TurnRecord
from hymem.validation import check_k, check_level, check_query, check_user_id

log = structlog.get_logger("hymem.memory")

Depth = Literal["auto", "light", "deep"]


class Memory:
    """Long-term conversational memory under one folder.

    Opening is cheap: models load lazily on first use. One process may write a folder at a
    time (a second writer gets StoreLockedError); pass read_only=True to share it for reads.
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
    ) -> None:
        overrides: dict[str, Any] = {}
        if llm is not None:
            overrides["llm"] = llm
        if isinstance(embedder, str):
            overrides["embedder"] = embedder
        if config is None:
            config = MemoryConfig(**overrides)
        elif overrides:
            config = config.model_copy(update=overrides)
            config = MemoryConfig.model_validate(config.model_dump())
        self.config = config
        self.path = Path(path)
        self._embedder: Embedder = (
            embedder
            if embedder is not None and not isinstance(embedder, str)
            else resolve_embedder(config.embedder, batch_size=config.embed_batch_size)
        )
        self._store = Store.open(
            self.path,
            embedder_name=self._embedder.name,
            dim=self._embedder.dim,
            read_only=read_only,
            vector_index_min_rows=config.vector_index_min_rows,
        )
        self._roles_override = roles
        self._roles: Roles | None = roles
        self._roles_lock = threading.RLock()
        self._components: dict[str, Any] = {}
        self._searcher = HybridSearcher(self._store, self._embedder, rrf_k=config.rrf_k)
        self._closed = False
        log.info(
            "memory.open",
            path=str(self.path),
            llm=config.llm,
            embedder=self._embedder.name,
            read_only=read_only,
        )

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
            for comp in self._components.values():
                closer = getattr(comp, "close", None)
                if closer is not None:
                    closer()
            if self._roles is not None and self._roles_override is None:
                self._roles.close()
            self._store.close()
            log.info("memory.close", path=str(self.path))

    def _component(self, name: str) -> Any:
        """Ingestor, Reader and Consolidator are built once, on first use, and keep any heavy
        state (the compressor model, thread pools) for the Memory's lifetime."""
        with self._roles_lock:
            comp = self._components.get(name)
            if comp is None:
                if name == "_ingestor":
                    from hymem.write.ingestor import Ingestor as comp_cls
                elif name == "_reader":
                    from hymem.read.reader import Reader as comp_cls
                else:
                    from hymem.sleep.consolidator import Consolidator as comp_cls
                comp = self._components[name] = comp_cls(self)
            return comp

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this Memory was closed")

    @property
    def roles(self) -> Roles:
        """The model behind every role; built on first use so opening stays cheap."""
        self._check_open()
        with self._roles_lock:
            if self._roles is None:
                self._roles = build_roles(self.config, self._embedder)
            return self._roles

    @property
    def store(self) -> Store:
        self._check_open()
        return self._store

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def searcher(self) -> HybridSearcher:
        return self._searcher

    # --- write path ----------------------------------------------------------------------
    def add(
        self,
        messages: Sequence[dict[str, Any]] | dict[str, Any],
        *,
        user_id: str,
        session_id: str = "default",
        timestamp: str | datetime | None = None,
    ) -> AddResult:
        """Persist messages as pending turns, then flush the short-term buffer if it is full."""
        self._check_open()
        check_user_id(user_id)
        return self._component("_ingestor").add(
            messages, user_id=user_id, session_id=session_id, timestamp=timestamp
        )

    def flush(self, *, user_id: str) -> AddResult:
        """Summarise and store every pending turn of `user_id` now."""
        self._check_open()
        check_user_id(user_id)
        return self._component("_ingestor").flush(user_id=user_id)

    def pending(self, *, user_id: str) -> list[TurnRecord]:
        """Turns accepted but not yet summarised (waiting for the buffer or a retry)."""
        self._check_open()
        check_user_id(user_id)
        return self._component("_ingestor").pending(user_id=user_id)

    # --- read path -----------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        user_id: str,
        k: int = 10,
        level: Level | str = Level.SUMMARY,
        mode: SearchMode = "hybrid",
        since: datetime | None = None,
        until: datetime | None = None,
        include_inactive: bool = False,
    ) -> list[Hit]:
        """Model-free hybrid retrieval (dense + BM25 fused by reciprocal rank)."""
        self._check_open()
        check_user_id(user_id)
        check_query(query)
        check_k(k)
        lvl = check_level(level)
        if mode not in ("hybrid", "dense", "lexical"):
            raise UserInputError(f"unknown search mode {mode!r}: use hybrid, dense or lexical")
        return self._searcher.search(
            query,
            user_id=user_id,
            k=k,
            level=lvl,
            mode=mode,
            time_range=(since, until) if since or until else None,
            include_inactive=include_inactive,
        )

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
    ) -> Answer:
        """Answer from summaries; escalate to raw dialogue when the light path says it must."""
        self._check_open()
        check_user_id(user_id)
        check_query(question)
        if depth not in ("auto", "light", "deep"):
            raise UserInputError(f"unknown depth {depth!r}: use auto, light or deep")
        for name, value in (("k", k), ("N", N), ("d", d)):
            if value is not None:
                check_k(value, name=name)
        if max_iterations is not None and max_iterations < 0:
            raise UserInputError("max_iterations must be >= 0")
        return self._component("_reader").ask(
            question,
            user_id=user_id,
            depth=depth,
            k=k or self.config.k,
            n_deep=N or self.config.n_deep,
            batch=d or self.config.select_batch,
            max_iterations=self.config.max_iterations if max_iterations is None else max_iterations,
        )

    def context(self, question: str, *, user_id: str, depth: Depth = "light") -> list[Hit]:
        """The context a path would assemble, for callers who bring their own answering model."""
        self._check_open()
        check_user_id(user_id)
        check_query(question)
        if depth not in ("auto", "light", "deep"):
            raise UserInputError(f"unknown depth {depth!r}: use auto, light or deep")
        return self._component("_reader").context(question, user_id=user_id, depth=depth)

    def traces(
        self, *, user_id: str | None = None, since: datetime | None = None
    ) -> list[dict[str, Any]]:
        """Per-ask traces, oldest first (the dashboard's input)."""
        self._check_open()
        if user_id is not None:
            check_user_id(user_id)
        reader = self._components.get("_reader")
        if reader is not None:  # trace rows are written in the background; wait for them
            reader.flush_traces()
        return self._store.read_traces(user_id=user_id, since=since)

    # --- sleep time ----------------------------------------------------------------------
    def sleep(
        self,
        *,
        user_id: str | None = None,
        max_workers: int | None = None,
        dry_run: bool = False,
    ) -> Any:
        """Consolidate the summary tier offline; returns a SleepReport."""
        self._check_open()
        if user_id is not None:
            check_user_id(user_id)
        if max_workers is not None:
            check_k(max_workers, name="max_workers")
        return self._component("_consolidator").sleep(
            user_id=user_id,
            max_workers=self.config.sleep_workers if max_workers is None else max_workers,
            dry_run=dry_run,
        )

    def history(self, summary_id: str, *, user_id: str) -> list[SummaryRecord]:
        """Every version of a summary, oldest first."""
        self._check_open()
        check_user_id(user_id)
        return self._component("_consolidator").history(summary_id, user_id=user_id)

    def restore(self, summary_id: str, *, user_id: str) -> SummaryRecord:
        """Reactivate a superseded or deleted version (and retire what replaced it)."""
        self._check_open()
        check_user_id(user_id)
        return self._component("_consolidator").restore(summary_id, user_id=user_id)

    def stats(self, *, user_id: str | None = None) -> dict[str, int]:
        self._check_open()
        return self._store.counts(user_id)

    def reindex(self) -> dict[str, int]:
        self._check_open()
        return self._store.reindex()


def exc_free() -> bool:
    """close() runs the optional sleep only on a clean exit, never while an error unwinds."""
    import sys

    return sys.exc_info()[0] is None


__all__ = ["ConfigError", "Memory"]
