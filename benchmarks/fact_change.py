"""Memory that stays true (issue 30): does the light path's context hold the fact true *then*?

A seeded world of simulated users (`fact_change_world.py`, no model) who move, change jobs,
turn a year older, switch favourites, pets, partners and travel plans, restating facts in other
words among small talk, is ingested into a fresh hymem memory (extractive backend unless
`--llm` names a model, MiniLM, offline). Each question names a user and a slot and is asked
at an `as_of` moment; its context is checked by whole-word matching against every value the
slot ever had:

* current only: the value true at `as_of` and no other value of the slot (target >= 0.95);
* stale without current: another value, but not the true one (target <= 0.03);
* both / neither: the rest;
* current only, by text: as current only, but a text naming the true value may also name an
  old one ("I left Lisbon, I'm in Porto now" states where they live now): what it still
  counts against a system is stale texts of their own.

An oracle row shows the ceiling of the first class for any context that shows what the user
said: its context is exactly the user's own turn that said the value true at `as_of`.

It also counts, over the user's active summaries at the end, duplicates per 100 facts (a fact
is a first statement or a change; a value mentioned by n active summaries has n - 1
duplicates; target <= 2) and stale-active summaries per 100 facts (active summaries naming a
value that is no longer current). The flat baseline, in the same run on the same embedder,
keeps every turn ("speaker: text") and reads the turns said at or before `as_of` by cosine to
the question, top down, until the next would pass hymem's mean context tokens; its duplicates
are counted the same way over its records (the turns). Shares are also broken down by slot
kind and by moment: after the first statement, between changes (an earlier value held), at
the end.

    python benchmarks/fact_change.py [--users 20] [--seed 0] [--out results.json] [--keep]
        [--sleep]   # also measure after one `Memory.sleep()` (a third row)
        [--llm local]  # a model summarises, and decides write-time and sleep updates
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from fact_change_report import (
    TARGETS,
    Outcome,
    SystemResult,
    console,
    group_table,
    outcome,
    result_json,
    summary_table,
)
from fact_change_world import Question, SimUser, World, build_world, statement_of, value_pattern
from hymem import Memory
from hymem.api.internals import embedder_of, roles_of
from hymem.embed.embedders import Embedder
from hymem.llm.tokens import count_tokens
from rich.progress import Progress

ORACLE = "oracle: the true statement, verbatim"


def count_records(result: SystemResult, user: SimUser, texts: list[str]) -> None:
    """Duplicates and stale-active records of one user at the end, per slot kind."""
    result.records += len(texts)
    for kind, slot in user.slots.items():
        values = slot.values
        hits = {
            v: {i for i, t in enumerate(texts) if value_pattern(kind, v).search(t)} for v in values
        }
        result.dups[kind] += sum(max(0, len(h) - 1) for h in hits.values())
        result.stale_active[kind] += len(set().union(*(hits[v] for v in values[:-1])))


# --- hymem ---------------------------------------------------------------------------------
def progress_bar() -> Progress:
    return Progress(console=console, transient=True)


def ingest(mem: Memory, world: World) -> None:
    """One add() per session with each message's own timestamp; a flush after each user."""
    total = sum(len(u.sessions) for u in world.users)
    with progress_bar() as bar:
        task = bar.add_task("ingest sessions", total=total)
        for user in world.users:
            for session in user.sessions:
                res = mem.add(session.messages, user_id=user.user_id, session_id=session.id)
                if res.error:
                    raise RuntimeError(f"{session.id}: {res.error}")
                bar.advance(task)
            res = mem.flush(user_id=user.user_id)
            if res.error or res.pending:
                raise RuntimeError(f"{user.user_id}: flush left {res.pending} ({res.error})")


def active_summaries(mem: Memory, user_id: str) -> list[str]:
    texts: list[str] = []
    cursor: str | None = None
    while True:
        page = mem.get_all(
            user_id=user_id, level="summary", status="active", limit=1000, cursor=cursor
        )
        texts += [item.text for item in page.items]
        if page.next_cursor is None:
            return texts
        cursor = page.next_cursor


def measure_hymem(mem: Memory, world: World, name: str) -> tuple[SystemResult, list[str]]:
    """Every question's light-path context, classified; the contexts come back for the JSON."""
    result, contexts = SystemResult(name), []
    with progress_bar() as bar:
        task = bar.add_task(f"{name}: contexts", total=len(world.questions))
        for q in world.questions:
            hits = mem.context(q.text, user_id=q.user_id, as_of=q.as_of)
            text = "\n".join(h.text for h in hits)
            result.outcomes.append(outcome(text, q, count_tokens(text)))
            contexts.append(text)
            bar.advance(task)
    for user in world.users:
        count_records(result, user, active_summaries(mem, user.user_id))
    return result, contexts


# --- flat baseline -------------------------------------------------------------------------
def measure_flat(embedder: Embedder, world: World, budget: int) -> tuple[SystemResult, list[str]]:
    """Every turn embedded once; per question the turns said by `as_of`, closest first, until
    the next would pass `budget` tokens (the first always fits)."""
    result, contexts = SystemResult("flat baseline"), []
    by_user: dict[str, list[Question]] = defaultdict(list)
    for q in world.questions:
        by_user[q.user_id].append(q)
    by_index = {id(q): i for i, q in enumerate(world.questions)}
    out: dict[int, tuple[Outcome, str]] = {}
    with progress_bar() as bar:
        task = bar.add_task("flat: embed turns", total=len(world.users))
        for user in world.users:
            msgs = [m for s in user.sessions for m in s.messages]
            texts = [f"{m['speaker']}: {m['text']}" for m in msgs]
            times = np.array([np.datetime64(m["timestamp"]) for m in msgs])
            tokens = [count_tokens(t) for t in texts]
            vectors = embedder.embed(texts)
            questions = by_user[user.user_id]
            qvecs = embedder.embed([q.text for q in questions])
            for q, qv in zip(questions, qvecs, strict=True):
                scores = np.where(times <= np.datetime64(q.as_of), vectors @ qv, -np.inf)
                picked: list[int] = []
                used = 0
                for i in np.argsort(-scores):
                    if scores[i] == -np.inf or (picked and used + tokens[i] > budget):
                        break
                    picked.append(int(i))
                    used += tokens[i]
                text = "\n".join(texts[i] for i in sorted(picked))
                out[by_index[id(q)]] = (outcome(text, q, count_tokens(text)), text)
            count_records(result, user, texts)
            bar.advance(task)
    for i in range(len(world.questions)):
        result.outcomes.append(out[i][0])
        contexts.append(out[i][1])
    return result, contexts


# --- the ceiling of a verbatim context -----------------------------------------------------
def measure_oracle(world: World) -> tuple[SystemResult, list[str]]:
    """A context of exactly one text: the user's own turn that said the value true at `as_of`.

    No system that shows what the user said can beat this on the whole-context classes: a
    change said as "I left Lisbon, I'm in Porto now" names the old value beside the new one.
    It keeps no records, so it has no duplicates."""
    result, contexts = SystemResult(ORACLE), []
    users = {u.user_id: u for u in world.users}
    for q in world.questions:
        text = statement_of(users[q.user_id], q)
        result.outcomes.append(outcome(text, q, count_tokens(text)))
        contexts.append(text)
    return result, contexts


def world_stats(world: World) -> dict[str, int]:
    slots = [s for u in world.users for s in u.slots.values()]
    return {
        "users": len(world.users),
        "sessions": sum(len(u.sessions) for u in world.users),
        "turns": sum(len(s.messages) for u in world.users for s in u.sessions),
        "slots": len(slots),
        "facts": sum(len(s.values) for s in slots),
        "changes": sum(len(s.values) - 1 for s in slots),
        "restatements": sum(e.kind == "repeat" for s in slots for e in s.events),
        "questions": len(world.questions),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20, help="simulated users (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="the world's seed (default 0)")
    parser.add_argument("--out", type=Path, help="write the results (and every context) as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the memory folder")
    parser.add_argument("--sleep", action="store_true", help="also measure after one sleep()")
    parser.add_argument(
        "--llm",
        default="extractive",
        help="the backend whose summariser, write-time update and sleep decide (e.g. local)",
    )
    args = parser.parse_args(argv)
    started = datetime.now()
    command = shlex.join([sys.executable, *sys.argv]) if argv is None else shlex.join(argv)
    console.print(f"[bold]{command}[/bold]\nstarted {started.isoformat(timespec='seconds')}")

    world = build_world(args.users, args.seed)
    stats = world_stats(world)
    console.print(", ".join(f"{v} {k}" for k, v in stats.items()))
    folder = Path(tempfile.mkdtemp(prefix="fact-change-"))
    seconds: dict[str, float] = {}
    try:
        with Memory(folder / "mem", llm=args.llm, create=True) as mem:
            clock = time.perf_counter()
            ingest(mem, world)
            seconds["ingest"] = time.perf_counter() - clock
            clock = time.perf_counter()
            hymem, hymem_ctx = measure_hymem(mem, world, "hymem")
            seconds["hymem contexts"] = time.perf_counter() - clock
            results, contexts = [hymem], {"hymem": hymem_ctx}
            if args.sleep:
                clock = time.perf_counter()
                report = mem.sleep()
                seconds["sleep"] = time.perf_counter() - clock
                console.print(
                    f"sleep: {report.summaries_scanned} summaries scanned, decisions "
                    f"{report.decisions}, {report.superseded} superseded, {report.deleted} deleted"
                )
                slept, contexts["hymem + sleep"] = measure_hymem(mem, world, "hymem + sleep")
                results.append(slept)
            budget = round(hymem.mean_tokens)
            clock = time.perf_counter()
            flat, contexts["flat baseline"] = measure_flat(embedder_of(mem), world, budget)
            seconds["flat baseline"] = time.perf_counter() - clock
            results.append(flat)
            oracle, contexts[ORACLE] = measure_oracle(world)
            results.append(oracle)
            usage = {role: u.model_dump() for role, u in roles_of(mem).cumulative_usage().items()}
    finally:
        if args.keep:
            console.print(f"memory kept in {folder / 'mem'}")
        else:
            shutil.rmtree(folder, ignore_errors=True)

    facts = stats["facts"]
    console.print(summary_table(results, facts))
    console.print(group_table(results, world, "kind"))
    console.print(group_table(results, world, "moment"))
    console.print(
        f"flat baseline budget: {budget} tokens per question (hymem's mean); tokens by "
        "hymem.llm.tokens.count_tokens; " + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())
    )
    for role, u in usage.items():  # the model's calls per role: a fallback is counted, not hidden
        console.print(
            f"model {role}: {u['calls']} calls, {u['fallbacks']} fallbacks, {u['retries']} "
            f"retries, {u['prompt_tokens']:,} prompt + {u['completion_tokens']:,} completion tokens"
        )
    if args.out:
        payload = {
            "command": command,
            "started": started.isoformat(timespec="seconds"),
            "seed": args.seed,
            "targets": TARGETS,
            "world": stats,
            "flat_budget_tokens": budget,
            "seconds": seconds,
            "model_usage": usage,
            "systems": {r.name: result_json(r, world, facts) for r in results},
            "questions": [
                {
                    "user_id": q.user_id,
                    "kind": q.kind,
                    "moment": q.moment,
                    "question": q.text,
                    "as_of": q.as_of.isoformat(),
                    "truth": q.truth,
                    "values": list(q.values),
                    **{
                        r.name: {"class": r.outcomes[i].cls, "context": contexts[r.name][i]}
                        for r in results
                    },
                }
                for i, q in enumerate(world.questions)
            ],
        }
        args.out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
        console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
