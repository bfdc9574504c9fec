"""Read-path latency: light-path overhead over bare search, and deep-path selection overlap.

    python benchmarks/ask_latency.py                       # full sizes (10k and 100k summaries)
    python benchmarks/ask_latency.py --sizes 2000 --queries 50   # a quick run

1. Light path, model time excluded (the default light path, which fills `light_tokens`, and
   beside it `ask(k=10)`, the top-k light path of before issue 29: target <= 1.5x it):
   `mem.ask(depth="light", max_iterations=0)` with `ZeroRoles`
   (renders the real light-answer prompt, then answers instantly) measures retrieval + prompt
   assembly + answer building + the trace write; bare `mem.search` is measured in the same run
   on the same queries. Target: ask p50 <= 1.5x search p50.
2. Deep path: the real openai client against the scripted server (tests/llm_server.py) with
   every reply delayed 200 ms, N=30, d=10: three selection batches should overlap, so the
   selection stage takes <= 2 call-latencies, not 3.

Stored vectors come from the hashing embedder (filling 100k summaries with MiniLM would take
minutes). Questions are embedded by it too unless `--query-embedders minilm` is given: then the
default model embeds them, as in use, where the default light path embeds the question and its
aspect in one batch and the top-k path the question alone (rankings over hashing vectors mean
nothing there; the costs are real).

    python benchmarks/ask_latency.py --sizes 10000 --queries 100 --deep-repeats 1 \
        --query-embedders hashing minilm
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")

from hymem.api.internals import embedder_of, store_of
from hymem.api.memory import Memory
from hymem.core.config import MemoryConfig
from hymem.core.types import RoleUsage, SegmentRecord, SummaryRecord
from hymem.embed.embedders import HashingEmbedder
from hymem.llm.formatting import format_asked_on, format_memories, format_pool
from hymem.llm.roles import (
    ContextItem,
    LightAnswerOutput,
    ReflectOutput,
    Role,
    RoleResult,
)
from hymem.prompts import load_prompt
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

_VOCAB = """
support group painting sunrise lake camping mountains adoption agency necklace grandmother pottery
class violin puppy apartment river charity race book school talk concert hiking garden recipe
birthday wedding trip museum beach guitar job interview doctor marathon cafe library movie
festival volunteer shelter bakery kayak sister brother friend parents
"""
WORDS = _VOCAB.split()
NAMES = ["Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "John", "Maria"]
DIM = 384
console = Console()


class ZeroRoles:
    """Roles with no model time: prompts are rendered as for a real call, answers are instant."""

    label = "zero"

    def light_answer(
        self,
        question: str,
        context: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,
    ) -> RoleResult[LightAnswerOutput]:
        messages = load_prompt(Role.LIGHT_ANSWER.value).render(
            question=question,
            memories=format_memories(context),
            pool=format_pool(pool),
            asked_on=format_asked_on(now),
        )
        tokens = sum(len(m["content"]) for m in messages) // 4
        answer = context[0].text if context else ""
        return RoleResult(
            role=Role.LIGHT_ANSWER,
            output=LightAnswerOutput(answer=answer, complete=True),
            usage=RoleUsage(calls=1, prompt_tokens=tokens, completion_tokens=8),
            prompt_version="light_answer@bench",
        )

    def reflect(self, question: str, answer: str) -> RoleResult[ReflectOutput]:
        return RoleResult(role=Role.REFLECT, output=ReflectOutput(complete=True))

    def close(self) -> None:
        pass


def fill(
    mem: Memory,
    user_id: str,
    n: int,
    *,
    per_segment: int = 5,
    batch: int = 10_000,
    vectors_by: HashingEmbedder | None = None,
) -> None:
    """n synthetic summaries (and n/per_segment segments) for one user, in batched commits;
    their vectors by `vectors_by` (default: the memory's own embedder)."""
    rng = random.Random(7)
    t0 = datetime(2023, 1, 1, 9, 0)
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task(f"filling {n:,} summaries", total=n)
        for start in range(0, n, batch):
            count = min(batch, n - start)
            segs: list[SegmentRecord] = []
            sums: list[SummaryRecord] = []
            texts = [
                f"{rng.choice(NAMES)} talked about the {' '.join(rng.sample(WORDS, 3))} "
                f"(memory {start + i})."
                for i in range(count)
            ]
            vectors = (vectors_by or embedder_of(mem)).embed(texts)
            for i in range(0, count, per_segment):
                seg_id = f"seg{start + i}"
                when = t0 + timedelta(hours=start + i)
                group = texts[i : i + per_segment]
                seg_text = "\n".join(f"[{when:%Y-%m-%d %H:%M}] A: {t}" for t in group)
                segs.append(
                    SegmentRecord(
                        id=seg_id,
                        user_id=user_id,
                        session_ids=["s"],
                        turn_ids=[f"t{start + i}"],
                        text=seg_text,
                        time_start=when,
                        time_end=when,
                        created_at=when,
                        vector=[float(x) for x in vectors[i]],
                    )
                )
                for j, text in enumerate(group):
                    sums.append(
                        SummaryRecord(
                            id=f"sum{start + i + j}",
                            user_id=user_id,
                            segment_id=seg_id,
                            text=text,
                            vector=[float(x) for x in vectors[i + j]],
                            time_start=when,
                            time_end=when,
                            created_at=when,
                            updated_at=when,
                        )
                    )
            store_of(mem).commit_segments(user_id, segs, sums, [])
            bar.advance(task, count)
    with console.status("optimize (compaction, ANN index)"):
        mem.optimize()


def timings(fn: Callable[[str], Any], queries: Sequence[str]) -> list[float]:
    out = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def pct(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def bench_light(
    size: int, n_queries: int, root: Path, index_min_rows: int, query_embedder: str = "hashing"
) -> dict[str, Any]:
    rng = random.Random(size)
    queries = [
        f"What did {rng.choice(NAMES)} say about the {' '.join(rng.sample(WORDS, 2))}?"
        for _ in range(n_queries)
    ]
    # minilm: questions embedded by the default model, as a user's are (the light path embeds
    # the question and its aspect, top-k the question alone); stored vectors still come from
    # the hashing embedder (same 384 dimensions), so the rankings are not meaningful, the
    # costs are
    minilm = query_embedder == "minilm"
    cfg = MemoryConfig.defaults(
        embedder="all-MiniLM-L6-v2" if minilm else "hashing",
        vector_index_min_rows=index_min_rows,
    )
    embedder = None if minilm else HashingEmbedder(DIM)
    with Memory(
        root / f"light{size}-{query_embedder}", config=cfg, embedder=embedder, roles=ZeroRoles()
    ) as mem:  # type: ignore[arg-type]
        fill(mem, "u", size, vectors_by=HashingEmbedder(DIM))
        warm = queries[: min(10, len(queries))]
        timings(lambda q: mem.search(q, user_id="u", k=10), warm)
        timings(lambda q: mem.ask(q, user_id="u", depth="light", max_iterations=0), warm)
        timings(lambda q: mem.ask(q, user_id="u", depth="light", max_iterations=0, k=10), warm)
        search_ms, ask_ms, topk_ms = [], [], []
        for q in queries:  # interleaved, so all three see the same machine load
            search_ms += timings(lambda x: mem.search(x, user_id="u", k=10), [q])
            ask_ms += timings(
                lambda x: mem.ask(x, user_id="u", depth="light", max_iterations=0), [q]
            )
            # an explicit k reads the top k, as every light path did before issue 29
            topk_ms += timings(
                lambda x: mem.ask(x, user_id="u", depth="light", max_iterations=0, k=10), [q]
            )
        stages: dict[str, list[float]] = {}
        for q in queries[:20]:
            ans = mem.ask(q, user_id="u", depth="light", max_iterations=0)
            for stage, ms in ans.latency_ms.items():
                stages.setdefault(stage, []).append(ms)
    return {
        "size": size,
        "queries": query_embedder,
        "search": (pct(search_ms, 50), pct(search_ms, 95)),
        "ask": (pct(ask_ms, 50), pct(ask_ms, 95)),
        "topk": (pct(topk_ms, 50), pct(topk_ms, 95)),
        "stages": {s: statistics.median(v) for s, v in stages.items()},
    }


def bench_deep(root: Path, delay_s: float, repeats: int) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.llm_server import ScriptedLLMServer

    with ScriptedLLMServer() as server:
        server.add_rule(
            role="light_answer", reply={"answer": "", "complete": False}, delay_s=delay_s
        )
        server.add_rule(
            role="select",
            delay_s=delay_s,
            reply=lambda body: {
                "ids": [body["messages"][-1]["content"].split("[", 2)[2].split("]", 1)[0]]
            },
        )
        server.add_rule(role="deep_answer", reply={"answer": "x"}, delay_s=delay_s)
        cfg = MemoryConfig.defaults(
            llm="openai:bench",
            llm_base_url=server.base_url,
            llm_api_key="bench",
            embedder="hashing",
            llm_max_retries=0,
        )
        with Memory(root / "deep", config=cfg, embedder=HashingEmbedder(DIM)) as mem:
            fill(mem, "u", 2_000)
            mem.ask("warm up the client", user_id="u", N=30, d=10, max_iterations=0)
            runs = []
            for i in range(repeats):
                start = time.perf_counter()
                ans = mem.ask(
                    f"what about the {WORDS[i]}?", user_id="u", N=30, d=10, max_iterations=0
                )
                wall = (time.perf_counter() - start) * 1000.0
                runs.append((wall, ans.latency_ms["select"], ans.usage.roles["select"].calls))
            in_flight = server.max_in_flight
    return {"runs": runs, "delay_ms": delay_s * 1000, "max_in_flight": in_flight}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--deep-repeats", type=int, default=5)
    parser.add_argument("--delay-ms", type=float, default=200.0)
    parser.add_argument(
        "--index-min-rows",
        type=int,
        default=MemoryConfig.defaults().vector_index_min_rows,
        help="build the ANN (IVF_PQ) index past this many rows; huge = flat search only",
    )
    parser.add_argument(
        "--query-embedders",
        nargs="+",
        default=["hashing"],
        choices=["hashing", "minilm"],
        help="what embeds the questions (minilm: the default model, as in use)",
    )
    args = parser.parse_args(argv)
    logging.getLogger("hymem").setLevel(logging.ERROR)  # hymem logs through stdlib logging

    with tempfile.TemporaryDirectory(prefix="hymem-ask-bench-") as tmp:
        root = Path(tmp)
        light = [
            bench_light(size, args.queries, root, args.index_min_rows, embedder)
            for embedder in args.query_embedders
            for size in args.sizes
        ]
        deep = bench_deep(root, args.delay_ms / 1000.0, args.deep_repeats)

    table = Table(title="light path: ask overhead (model time excluded) vs bare search, ms")
    for col in (
        "summaries",
        "questions by",
        "search p50",
        "search p95",
        "ask p50",
        "ask p95",
        "ratio p50",
        "ratio p95",
        "top-k ask p50",
        "ask / top-k p50",
    ):
        table.add_column(col)
    for row in light:
        (s50, s95), (a50, a95), (t50, _) = row["search"], row["ask"], row["topk"]
        table.add_row(
            f"{row['size']:,}",
            row["queries"],
            f"{s50:.1f}",
            f"{s95:.1f}",
            f"{a50:.1f}",
            f"{a95:.1f}",
            f"{a50 / s50:.2f}x",
            f"{a95 / s95:.2f}x",
            f"{t50:.1f}",
            f"{a50 / t50:.2f}x",
        )
    console.print(table)
    for row in light:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in row["stages"].items())
        console.print(
            f"  stage medians at {row['size']:,} summaries, {row['queries']} (ms): {stages}"
        )

    delay = deep["delay_ms"]
    table = Table(title=f"deep path: N=30, d=10, every model call takes {delay:.0f} ms")
    for col in ("run", "select calls", "select stage ms", "in call-latencies", "ask wall ms"):
        table.add_column(col)
    for i, (wall, select_ms, calls) in enumerate(deep["runs"], 1):
        table.add_row(
            str(i), str(calls), f"{select_ms:.0f}", f"{select_ms / delay:.2f}", f"{wall:.0f}"
        )
    console.print(table)
    worst = max(s for _, s, _ in deep["runs"]) / delay
    console.print(
        f"max in flight at the server: {deep['max_in_flight']}; "
        f"worst selection stage = {worst:.2f} call-latencies (target <= 2)"
    )


if __name__ == "__main__":
    main()
