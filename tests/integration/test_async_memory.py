"""`AsyncMemory` under asyncio with many concurrent tasks, on the real store (LanceDB +
Tantivy) with the extractive backend. Plain `asyncio.run` in each test: no plugin needed."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
from hymem import AsyncMemory, MemoryConfig, StoreClosedError, UserInputError
from hymem.testing import store_of

from tests.bag_embedder import BagEmbedder

pytestmark = pytest.mark.integration

USERS = [f"user{u}" for u in range(5)]


class GatedEmbedder(BagEmbedder):
    """BagEmbedder whose `embed` can be made to wait: on a barrier (proves that calls run at
    the same time) or on an event (holds a call in flight)."""

    def __init__(self) -> None:
        self.barrier: threading.Barrier | None = None
        self.hold: threading.Event | None = None
        self.entered = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.entered.set()
        if self.barrier is not None:
            self.barrier.wait(timeout=20)  # BrokenBarrierError if the calls were serialised
        if self.hold is not None:
            self.hold.wait(timeout=20)
        return super().embed(texts)


def open_async(path: Path, embedder: BagEmbedder | None = None, **kw: object) -> AsyncMemory:
    cfg = MemoryConfig.defaults(**kw)  # type: ignore[arg-type]
    return AsyncMemory(path, config=cfg, embedder=embedder or BagEmbedder(), max_workers=8)


def test_fifty_concurrent_writers_lose_and_reorder_nothing(tmp_path: Path) -> None:
    """50 tasks, 10 per user, each making 3 successive adds of 2 messages: every turn is
    stored exactly once, each call's turns are contiguous and each task's turns in order."""

    async def writer(mem: AsyncMemory, user: str, task: int) -> None:
        for call in range(3):
            msgs = [
                {"speaker": "Ann", "text": f"task {task} call {call} part {part} about hiking"}
                for part in range(2)
            ]
            await mem.add(msgs, user_id=user, session_id="s1", timestamp="2023-05-08")

    async def main() -> None:
        async with open_async(tmp_path / "m", buffer_tokens=64) as mem:
            await asyncio.gather(*(writer(mem, u, t) for u in USERS for t in range(10)))
            await asyncio.gather(*(mem.flush(user_id=u) for u in USERS))
            for user in USERS:
                turns = store_of(mem.memory).get_turns(user)
                texts = [t.text for t in sorted(turns, key=lambda t: t.seq)]
                assert [t.seq for t in sorted(turns, key=lambda t: t.seq)] == list(range(60))
                assert len(set(texts)) == 60
                for task in range(10):
                    mine = [x for x in texts if x.startswith(f"task {task} ")]
                    assert mine == [
                        f"task {task} call {c} part {p} about hiking"
                        for c in range(3)
                        for p in range(2)
                    ]
                    for c in range(3):  # the two messages of one call are neighbours
                        first = texts.index(f"task {task} call {c} part 0 about hiking")
                        assert texts[first + 1] == f"task {task} call {c} part 1 about hiking"
                assert await mem.pending(user_id=user) == []
                assert (await mem.stats(user_id=user))["summaries"] > 0

    asyncio.run(main())


def test_readers_run_in_parallel(tmp_path: Path) -> None:
    """Four searches must be inside the embedder at the same time for any to finish."""
    emb = GatedEmbedder()

    async def main() -> None:
        async with open_async(tmp_path / "m", emb) as mem:
            await mem.add("I adopted a golden retriever named Oscar.", user_id="ann")
            await mem.flush(user_id="ann")
            emb.barrier = threading.Barrier(4)
            queries = ["dog", "golden retriever", "Oscar", "adopted"]
            results = await asyncio.gather(*(mem.search(q, user_id="ann") for q in queries))
            emb.barrier = None
            assert all(hits for hits in results)
            answers = await asyncio.gather(
                *(mem.ask(f"What is the {q}?", user_id="ann", depth="light") for q in queries)
            )
            assert {a.path for a in answers} == {"light"}
            assert len(await mem.traces(user_id="ann")) == 4

    asyncio.run(main())


def test_aclose_waits_for_calls_in_flight_then_refuses_new_ones(tmp_path: Path) -> None:
    emb = GatedEmbedder()

    async def main() -> None:
        mem = open_async(tmp_path / "m", emb)
        await mem.add("I adopted a golden retriever named Oscar.", user_id="ann")
        await mem.flush(user_id="ann")
        emb.hold, emb.entered = threading.Event(), threading.Event()
        search = asyncio.create_task(mem.search("dog", user_id="ann"))
        await asyncio.to_thread(emb.entered.wait, 20)  # the search is inside the embedder
        closing = asyncio.create_task(mem.aclose())
        await asyncio.sleep(0.05)
        assert not closing.done() and mem.closed
        with pytest.raises(StoreClosedError):
            await mem.stats(user_id="ann")
        emb.hold.set()
        assert await search  # the call in flight finished normally
        await asyncio.gather(closing, mem.aclose())  # idempotent, both wait for the one close
        with pytest.raises(StoreClosedError):
            mem.memory.stats()

    asyncio.run(main())


def test_a_cancelled_call_still_waiting_for_a_thread_never_runs(tmp_path: Path) -> None:
    emb = GatedEmbedder()

    async def main() -> None:
        cfg = MemoryConfig.defaults()
        async with AsyncMemory(tmp_path / "m", config=cfg, embedder=emb, max_workers=1) as mem:
            emb.hold, emb.entered = threading.Event(), threading.Event()
            busy = asyncio.create_task(mem.search("dog", user_id="ann"))
            await asyncio.to_thread(emb.entered.wait, 20)  # the only thread is taken
            queued = asyncio.create_task(mem.add("never stored", user_id="ann"))
            await asyncio.sleep(0.05)
            queued.cancel()
            emb.hold.set()
            await busy
            with pytest.raises(asyncio.CancelledError):
                await queued
            assert await mem.pending(user_id="ann") == []

    asyncio.run(main())


def test_bad_pool_size_is_refused_before_opening(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="max_workers"):
        AsyncMemory(tmp_path / "m", embedder=BagEmbedder(), max_workers=0)
    assert not (tmp_path / "m").exists()


def test_async_with_skips_sleep_on_close_when_the_body_failed(tmp_path: Path) -> None:
    """As with the sync `with`: the optional sleep runs on a clean exit only."""
    from hymem.embed.embedders import HashingEmbedder

    from tests.fixtures_sleep import seed_store

    dup = "Caroline went to the LGBTQ support group on 7 May 2023."

    async def run(folder: str, fail: bool) -> list[str]:
        emb = HashingEmbedder()
        cfg = MemoryConfig.defaults(sleep_on_close=True)
        with pytest.raises(RuntimeError) if fail else nullcontext():
            async with AsyncMemory(tmp_path / folder, config=cfg, embedder=emb) as mem:
                sums = seed_store(store_of(mem.memory), emb, "u", [dup, dup.lower()])
                if fail:
                    raise RuntimeError("the application failed")
        async with AsyncMemory(tmp_path / folder, embedder=emb) as mem:
            return [r.status.value for r in await mem.history(sums[0].id, user_id="u")]

    assert asyncio.run(run("clean", fail=False)) == ["superseded", "active"]
    assert asyncio.run(run("failed", fail=True)) == ["active"]


def test_closing_a_busy_memory_does_not_block_the_event_loop(tmp_path: Path) -> None:
    """While a slow call runs and aclose waits for it, other coroutines keep running."""
    emb = GatedEmbedder()

    async def main() -> None:
        mem = open_async(tmp_path / "m", emb)
        emb.hold, emb.entered = threading.Event(), threading.Event()
        search = asyncio.create_task(mem.search("dog", user_id="ann"))
        await asyncio.to_thread(emb.entered.wait, 20)
        closing = asyncio.create_task(mem.aclose())
        start = time.perf_counter()
        ticks = 0
        while time.perf_counter() - start < 0.2:  # the loop still schedules us
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks >= 5 and not closing.done()
        emb.hold.set()
        await asyncio.gather(search, closing)

    asyncio.run(main())
