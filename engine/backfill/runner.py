"""A backfill: which users still need work, who prepares them, and committing each one.

Users whose whole history the store already holds (an earlier, finished run of the same
backfill) are skipped before any work; every other user is prepared (in this process, or on Ray
workers) and committed as soon as it is ready, under the user's right to write and with this
process's adds and flushes of that user held off. A user that fails (a model error, a user that
already holds other turns) is reported and the others go on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from hymem.backfill.commit import BackfillStore, already_stored, commit_prepared
from hymem.backfill.histories import UserHistory
from hymem.backfill.prepare import PreparedUser, Preparer
from hymem.backfill.ray_pool import prepared_on_ray
from hymem.core.config import MemoryConfig
from hymem.core.errors import HymemError, UserInputError
from hymem.core.logging import get_logger
from hymem.core.validation import check_user_id
from hymem.embed.embedders import Embedder
from hymem.llm.roles import Roles
from hymem.write.guard import WriteGuard
from hymem.write.ingestor import Ingestor

log = get_logger("hymem.backfill")


@dataclass
class BackfillReport:
    users: int = 0  # users in the histories
    turns: int = 0  # turns in the histories
    skipped: list[str] = field(default_factory=list)  # already stored whole: no work done
    written_turns: int = 0  # turns this run stored (a resumed run: only the missing ones)
    segments: int = 0
    summaries: int = 0
    pending: int = 0  # turns left pending by a summariser failure (the next flush retries)
    failed: dict[str, str] = field(default_factory=dict)  # user -> why
    seconds: float = 0.0
    commit_seconds: float = 0.0  # of `seconds`, committing (the driver's share: its ceiling)
    workers: int = 1
    runner: str = "local"


Outcome = PreparedUser | tuple[str, str]
Progress = Callable[[int], None]


class Backfill:
    """A Memory's backfill: its store, embedder, config and roles; its guard and ingestor."""

    def __init__(
        self,
        store: BackfillStore,
        embedder: Embedder,
        config: MemoryConfig,
        *,
        guard: WriteGuard,
        ingestor: Ingestor,
        roles: Roles | None = None,
    ) -> None:
        self._store, self._embedder, self._config = store, embedder, config
        self._guard, self._ingestor, self._roles = guard, ingestor, roles

    def run(
        self,
        histories: Sequence[UserHistory],
        *,
        ray: str | None = None,
        workers: int = 1,
        progress: Progress | None = None,
    ) -> BackfillReport:
        """Store every history; `ray` is None (this process), "local" or a cluster address.
        `progress(n)` hears each user's turn count once it is committed (or skipped)."""
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise UserInputError(f"workers must be a positive integer, got {workers!r}")
        seen: set[str] = set()
        for h in histories:
            check_user_id(h.user_id)
            if h.user_id in seen:
                raise UserInputError(f"user {h.user_id!r} appears twice: give one history each")
            seen.add(h.user_id)
        started = time.perf_counter()
        report = BackfillReport(
            users=len(histories),
            turns=sum(h.turn_count for h in histories),
            workers=workers,
            runner="local" if ray is None else "ray",
        )
        todo = []
        for h in histories:
            if already_stored(self._store, h.user_id, h.turn_count):
                report.skipped.append(h.user_id)
                if progress is not None:
                    progress(h.turn_count)
            else:
                todo.append(h)
        sizes = {h.user_id: h.turn_count for h in todo}
        for outcome in self._prepared(todo, ray, workers):
            self._commit(outcome, report)
            if progress is not None:
                progress(
                    sizes[outcome.user_id if isinstance(outcome, PreparedUser) else outcome[0]]
                )
        report.seconds = time.perf_counter() - started
        log.info(
            "backfill.done",
            users=report.users,
            skipped=len(report.skipped),
            failed=len(report.failed),
            turns=report.written_turns,
            seconds=round(report.seconds, 2),
            runner=report.runner,
        )
        return report

    def _prepared(
        self, todo: Sequence[UserHistory], ray: str | None, workers: int
    ) -> Iterator[Outcome]:
        if not todo:
            return  # everyone is stored already: no Ray runtime, no model
        if ray is not None:
            yield from prepared_on_ray(
                todo,
                config=self._config,
                embedder=self._embedder,
                roles=self._roles,
                address=ray,
                workers=workers,
            )
            return
        preparer = Preparer(self._config, self._embedder, roles=self._roles)
        try:
            for history in todo:
                try:
                    yield preparer.prepare(history)
                except HymemError as exc:
                    yield history.user_id, f"{type(exc).__name__}: {exc}"
        finally:
            preparer.close()

    def _commit(self, outcome: Outcome, report: BackfillReport) -> None:
        if not isinstance(outcome, PreparedUser):
            user, why = outcome
            report.failed[user] = why
            log.warning("backfill.user_failed", user_id=user, error=why)
            return
        user = outcome.user_id
        started = time.perf_counter()
        try:
            with self._guard.versions(user), self._ingestor.exclusive(user):
                done = commit_prepared(self._store, outcome)
        except UserInputError as exc:
            report.failed[user] = f"{type(exc).__name__}: {exc}"
            log.warning("backfill.user_failed", user_id=user, error=str(exc))
            return
        report.commit_seconds += time.perf_counter() - started
        report.written_turns += done.turns
        report.segments += done.segments
        report.summaries += done.summaries
        report.pending += outcome.pending
        for error in outcome.errors:
            log.warning("backfill.user_error", user_id=user, error=error)


__all__ = ["Backfill", "BackfillReport"]
