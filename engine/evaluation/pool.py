"""Answering questions concurrently with a bounded number in flight, for every benchmark.

At most 2 x workers jobs are submitted at a time, so an interrupt loses little and memory
stays flat on large runs. A job raising a hymem error is counted and logged, not fatal: its
result is never recorded, so a rerun tries it again."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from hymem.core.errors import HymemError
from hymem.core.logging import get_logger
from hymem.evaluation.progress import make_progress

log = get_logger("hymem.evaluation.pool")

J = TypeVar("J")


def run_bounded(
    jobs: Iterable[J],
    fn: Callable[[J], None],
    *,
    total: int,
    workers: int,
    describe: Callable[[J], Mapping[str, Any]],
    label: str = "ask",
    show_progress: bool = True,
) -> tuple[int, int]:
    """(done, failed) after running `fn` on every job; `describe` names a failed job in the
    `eval.question_failed` log event."""
    done = failed = 0
    with (
        make_progress(show_progress) as progress,
        ThreadPoolExecutor(workers, thread_name_prefix="hymem-eval") as pool,
    ):
        task = progress.add_task(label, total=total)
        pending: dict[Future[None], J] = {}
        it = iter(jobs)
        while True:
            while len(pending) < 2 * workers:
                job = next(it, None)
                if job is None:
                    break
                pending[pool.submit(fn, job)] = job
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                job = pending.pop(fut)
                try:
                    fut.result()
                    done += 1
                except HymemError as exc:
                    failed += 1
                    log.warning("eval.question_failed", **describe(job), error=str(exc))
                progress.advance(task)
    return done, failed


__all__ = ["run_bounded"]
