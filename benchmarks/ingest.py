"""Write-path benchmark on one LoCoMo conversation of the development split.

Feeds the conversation turn by turn (LightMem's incremental setting; `--feed session` adds whole
sessions) into a fresh memory folder per buffer size th, then flushes, and reports:

* turns/s of the whole write path with the extractive backend and the MiniLM embedder;
* summariser calls and tokens per conversation, counted by `CountingRoles`: an in-process Roles
  that answers with ExtractiveRoles' output but accounts each call as a model would, i.e. the
  prompt tokens of the real rendered `prompts/summarise.md` prompt and the completion tokens of
  the JSON reply (`hymem.llm.tokens.count_tokens`). No server, no network;
* Level-1 (summaries) and Level-2 (segments) per 100 turns;
* LightMem's reported 30-42 summariser calls per LoCoMo conversation at th = 512-768.

    python benchmarks/ingest.py [PATH] [--conversation conv-26] [--th 512 768] [--feed turn]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")

from hymem import Memory, MemoryConfig
from hymem.core.types import RoleUsage
from hymem.embed.embedders import resolve_embedder
from hymem.evaluation.locomo_data import conversation_messages, load_locomo
from hymem.llm.extractive.backend import ExtractiveRoles
from hymem.llm.formatting import format_segments
from hymem.llm.roles import RoleResult, SegmentInput, SummariseOutput
from hymem.llm.tokens import count_tokens
from hymem.prompts import load_prompt
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "data" / "locomo" / "locomo10-dev.json"
LIGHTMEM_CALLS = "30-42"


class CountingRoles(ExtractiveRoles):
    """ExtractiveRoles whose summarise usage is what a model would be billed for."""

    label = "counting(extractive)"

    def __init__(self, embedder: Any) -> None:
        super().__init__(embedder)
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.segments_per_call: list[int] = []

    def summarise(self, segments: list[SegmentInput]) -> RoleResult[SummariseOutput]:
        result = super().summarise(segments)
        messages = load_prompt("summarise").render(segments=format_segments(segments))
        prompt = sum(count_tokens(m["content"]) for m in messages)
        completion = count_tokens(json.dumps(result.output.model_dump()))
        self.calls += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.segments_per_call.append(len(segments))
        usage = RoleUsage(calls=1, prompt_tokens=prompt, completion_tokens=completion)
        return result.model_copy(update={"usage": usage})


def run_once(conv: Any, th: int, feed: str, embedder: Any, console: Console) -> dict[str, Any]:
    roles = CountingRoles(embedder)
    # Tantivy may still be merging segments just after close(): never fail on cleanup
    with tempfile.TemporaryDirectory(
        prefix="hymem-bench-ingest-", ignore_cleanup_errors=True
    ) as folder:
        cfg = MemoryConfig.defaults(buffer_tokens=th)
        with Memory(folder, config=cfg, embedder=embedder, roles=roles) as mem:
            started = time.perf_counter()
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task(f"th={th}", total=conv.turn_count)
                for session_id, when, msgs in conversation_messages(conv):
                    chunks = [msgs] if feed == "session" else [[m] for m in msgs]
                    for chunk in chunks:
                        mem.add(
                            chunk, user_id=conv.sample_id, session_id=session_id, timestamp=when
                        )
                        progress.advance(task, len(chunk))
                mem.flush(user_id=conv.sample_id)
            seconds = time.perf_counter() - started
            stats = mem.stats(user_id=conv.sample_id)
    turns = conv.turn_count
    return {
        "th": th,
        "turns": turns,
        "sessions": len(conv.sessions),
        "seconds": seconds,
        "turns_per_s": turns / seconds,
        "calls": roles.calls,
        "prompt_tokens": roles.prompt_tokens,
        "completion_tokens": roles.completion_tokens,
        "segments_per_call": sum(roles.segments_per_call) / max(roles.calls, 1),
        "l1_per_100": 100 * stats["summaries"] / turns,
        "l2_per_100": 100 * stats["segments"] / turns,
        "pending": stats["pending_turns"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversation", default=None, help="sample_id (default: the first)")
    parser.add_argument("--th", type=int, nargs="+", default=[512, 768])
    parser.add_argument("--feed", choices=["turn", "session"], default="turn")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    # keep the table readable: per-call events are for the dashboard, not this report
    logging.getLogger("hymem").setLevel(logging.WARNING)

    console = Console(stderr=True)
    convs = load_locomo(args.path)
    conv = (
        next((c for c in convs if c.sample_id == args.conversation), None)
        if (args.conversation)
        else convs[0]
    )
    if conv is None:
        console.print(f"unknown conversation {args.conversation!r}")
        return 2
    embedder = resolve_embedder(args.embedder)
    embedder.embed(["warm up"])
    rows = [run_once(conv, th, args.feed, embedder, console) for th in args.th]

    table = Table(
        title=f"write path on {conv.sample_id} ({conv.turn_count} turns, {len(conv.sessions)} "
        f"sessions; feed={args.feed}; extractive + {embedder.name}; calls counted as a model)"
    )
    headers = [
        "th",
        "turns/s",
        "sum. calls",
        "LightMem calls",
        "prompt tok",
        "compl. tok",
        "seg/call",
        "L1/100 turns",
        "L2/100 turns",
        "pending",
    ]
    for h in headers:
        table.add_column(h, justify="right")
    for r in rows:
        table.add_row(
            str(r["th"]),
            f"{r['turns_per_s']:.1f}",
            str(r["calls"]),
            LIGHTMEM_CALLS,
            str(r["prompt_tokens"]),
            str(r["completion_tokens"]),
            f"{r['segments_per_call']:.1f}",
            f"{r['l1_per_100']:.1f}",
            f"{r['l2_per_100']:.1f}",
            str(r["pending"]),
        )
    Console(width=max(Console().width, 130)).print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
