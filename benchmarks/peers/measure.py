"""The run's phases, each alternating the systems (`workload.rotation`) so that load from other
processes falls on all of them alike:

1. ingest the development histories: history by history, every system in turn, one add per
   session (or per turn) and a flush at the history's end; times from inside the workers;
2. search the development questions: question by question, every system in turn, a timed
   top-10 search, and the ranking the token budget is cut from (hymem: its light-path context;
   a peer: its top `pool`);
3. disk size of each closed store, then cold start: a fresh process per system that imports,
   opens the store and answers one question, timed from spawn to reply, `cold_runs` rounds;
4. 100k (`scale`) memories for one user, the same synthetic texts and precomputed vectors for
   every system, then `scale_queries` timed top-10 searches after a warm-up.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from client import Worker
from hymem.llm.tokens import count_tokens
from rich.progress import Progress
from systems import System
from workers.wire import folder_bytes
from workload import History, Hit, Question, recall_at_budget, recall_at_k, rotation


@dataclass
class Outcome:
    """Everything measured for one system; `report.py` turns it into figures."""

    versions: dict[str, str] = field(default_factory=dict)
    ingest_s: dict[str, float] = field(default_factory=dict)  # per dataset
    ingest_turns: dict[str, int] = field(default_factory=dict)
    embed_s: dict[str, float] = field(default_factory=dict)  # of ingest_s, where reported
    search_ms: list[float] = field(default_factory=list)  # dev, top-10
    context_ms: list[float] = field(default_factory=list)  # hymem's light context
    recall_k: dict[str, list[float]] = field(default_factory=dict)
    recall_budget: dict[str, list[float]] = field(default_factory=dict)
    tokens_budget: dict[str, list[int]] = field(default_factory=dict)
    recall_search_budget: dict[str, list[float]] = field(default_factory=dict)  # hymem only
    disk_bytes: int = 0
    cold_s: list[float] = field(default_factory=list)
    cold_parts: list[dict[str, float]] = field(default_factory=list)
    scale_load_s: float = float("nan")
    scale_ms: list[float] = field(default_factory=list)
    scale_disk_bytes: int = 0


@dataclass
class Plan:
    workdir: Path
    model: str  # the bundled MiniLM folder every system embeds with
    pythons: dict[str, Path]
    k: int = 10
    pool: int = 50
    budget: int = 400
    cold_runs: int = 3
    scale_queries: int = 100
    scale_warmup: int = 10


def _worker(plan: Plan, system: System, phase: str) -> Worker:
    log = plan.workdir / "logs" / f"{system.name}-{phase}.log"
    return Worker(plan.pythons[system.peer], system.script, log)


def _store(plan: Plan, system: System, phase: str) -> Path:
    parent = plan.workdir / "stores" / phase
    parent.mkdir(parents=True, exist_ok=True)
    return parent / system.name


def ingest(
    plan: Plan,
    systems: list[System],
    histories: list[History],
    progress: Progress,
    out: dict[str, Outcome],
    workers: dict[str, Worker],
) -> None:
    """Phase 1, into `workers` (opened here, left open for phase 2; the caller closes them)."""
    for s in systems:
        folder = _store(plan, s, "dev")
        shutil.rmtree(folder, ignore_errors=True)
        workers[s.name] = w = _worker(plan, s, "dev")
        out[s.name].versions = w.call("open", path=str(folder), model=plan.model)["versions"]
    for w in workers.values():
        _warm_up(w)
    total = sum(h.turn_count for h in histories) * len(systems)
    task = progress.add_task("ingest (turns x systems)", total=total)
    by_name = {s.name: s for s in systems}
    for n, history in enumerate(histories):
        for name in rotation(list(by_name), n):
            s = by_name[name]
            o, w = out[s.name], workers[s.name]
            replies = []
            for session in history.sessions:
                items = [
                    {
                        "id": t.id,
                        "speaker": t.speaker,
                        "role": t.role,
                        "text": t.text,
                        "memory": t.memory,
                    }
                    for t in session.turns
                ]
                if not items:
                    continue
                replies.append(
                    w.call(
                        "add",
                        user=history.user,
                        session=session.id,
                        time=session.time,
                        items=items,
                        one_by_one=s.one_by_one,
                    )
                )
                progress.advance(task, len(items))
            replies.append(w.call("flush", user=history.user))
            ds = history.dataset
            o.ingest_s[ds] = o.ingest_s.get(ds, 0.0) + sum(r["seconds"] for r in replies)
            o.ingest_turns[ds] = o.ingest_turns.get(ds, 0) + history.turn_count
            if any("embed_s" in r for r in replies):
                o.embed_s[ds] = o.embed_s.get(ds, 0.0) + sum(r.get("embed_s", 0) for r in replies)
    progress.remove_task(task)


WARM_UP = [
    ("warm-1", "2023-01-01T10:00:00", ["I started a pottery class.", "Nice, how was it?"]),
    ("warm-2", "2023-01-08T10:00:00", ["We adopted a dog.", "What breed?", "A beagle."]),
]


def _warm_up(w: Worker) -> None:
    """One small untimed history and a search under a user of its own, so that one-time
    loading (models, tokenizers, first index) stays out of every system's timed ingest."""
    for session, when, texts in WARM_UP:
        items = [
            {"id": f"{session}:{i}", "speaker": "A", "role": "user", "text": t, "memory": f"A: {t}"}
            for i, t in enumerate(texts)
        ]
        w.call("add", user="warm-up", session=session, time=when, items=items, one_by_one=False)
    w.call("flush", user="warm-up")
    w.call("search", user="warm-up", query="what dog?", k=2)


def _hits(reply: dict[str, Any]) -> list[Hit]:
    return [Hit(h["text"], tuple(h["turns"])) for h in reply["hits"]]


def _tokens(hits: list[Hit], cache: dict[str, int]) -> list[int]:
    for h in hits:
        if h.text not in cache:
            cache[h.text] = count_tokens(h.text)
    return [cache[h.text] for h in hits]


def _sure(recall: float | None) -> float:
    """Every question of the workload names evidence, so its recall is defined."""
    assert recall is not None, "a question without evidence reached scoring"
    return recall


def _at_budget(
    plan: Plan, q: Question, hits: list[Hit], cache: dict[str, int]
) -> tuple[float, int]:
    recall, used = recall_at_budget(q.evidence, hits, _tokens(hits, cache), plan.budget)
    return _sure(recall), used


def search(
    plan: Plan,
    systems: list[System],
    workers: dict[str, Worker],
    questions: list[Question],
    progress: Progress,
    out: dict[str, Outcome],
) -> None:
    """Phase 2."""
    by_name = {s.name: s for s in systems if s.searched}
    cache: dict[str, int] = {}
    task = progress.add_task("search (questions x systems)", total=len(questions) * len(by_name))
    for n, q in enumerate(questions):
        for name in rotation(list(by_name), n):
            s, w, o = by_name[name], workers[name], out[name]
            top = w.call("search", user=q.user, query=q.text, k=plan.k)
            o.search_ms.append(top["seconds"] * 1000)
            ranked = _hits(w.call("search", user=q.user, query=q.text, k=plan.pool))
            if s.has_context:  # hymem's plain ranking is kept too, beside its context
                o.recall_search_budget.setdefault(q.dataset, []).append(
                    _at_budget(plan, q, ranked, cache)[0]
                )
                ctx = w.call("context", user=q.user, query=q.text)
                o.context_ms.append(ctx["seconds"] * 1000)
                ranked = _hits(ctx)
            recall, used = _at_budget(plan, q, ranked, cache)
            o.recall_k.setdefault(q.dataset, []).append(
                _sure(recall_at_k(q.evidence, _hits(top), plan.k))
            )
            o.recall_budget.setdefault(q.dataset, []).append(recall)
            o.tokens_budget.setdefault(q.dataset, []).append(used)
            progress.advance(task)
    progress.remove_task(task)


def cold_start(
    plan: Plan,
    systems: list[System],
    question: Question,
    progress: Progress,
    out: dict[str, Outcome],
) -> None:
    """Phase 3 (after every dev worker is closed): disk size, then fresh processes."""
    for s in systems:
        out[s.name].disk_bytes = folder_bytes(_store(plan, s, "dev"))
    by_name = {s.name: s for s in systems if s.searched}
    task = progress.add_task("cold start", total=plan.cold_runs * len(by_name))
    for n in range(plan.cold_runs):
        for name in rotation(list(by_name), n):
            s = by_name[name]
            t0 = time.perf_counter()
            with _worker(plan, s, "cold") as w:
                opened = w.call("open", path=str(_store(plan, s, "dev")), model=plan.model)
                first = w.call("search", user=question.user, query=question.text, k=plan.k)
                out[name].cold_s.append(time.perf_counter() - t0)
            out[name].cold_parts.append(
                {
                    "import_s": opened["import_s"],
                    "open_s": opened["open_s"],
                    "search_s": first["seconds"],
                }
            )
            progress.advance(task)
    progress.remove_task(task)


def scale(
    plan: Plan,
    systems: list[System],
    texts: list[str],
    vectors: np.ndarray,
    queries: list[str],
    progress: Progress,
    out: dict[str, Outcome],
) -> None:
    """Phase 4: every system loads the same precomputed vectors, then searches alternate."""
    data = plan.workdir / "scale-data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "texts.json").write_text(json.dumps(texts))
    np.save(data / "vectors.npy", vectors.astype(np.float32))
    user = "scale-user"
    workers: dict[str, Worker] = {}
    task = progress.add_task(f"load {len(texts):,} memories", total=len(systems))
    try:
        for s in systems:
            folder = _store(plan, s, "scale")
            shutil.rmtree(folder, ignore_errors=True)
            workers[s.name] = w = _worker(plan, s, "scale")
            w.call("open", path=str(folder), model=plan.model)
            out[s.name].scale_load_s = w.call(
                "load",
                user=user,
                texts=str(data / "texts.json"),
                vectors=str(data / "vectors.npy"),
            )["seconds"]
            progress.advance(task)
        progress.remove_task(task)
        task = progress.add_task("search at scale", total=len(queries) * len(systems))
        for n, query in enumerate(queries):
            for name in rotation(list(workers), n):
                reply = workers[name].call("search", user=user, query=query, k=plan.k)
                if n >= plan.scale_warmup:
                    out[name].scale_ms.append(reply["seconds"] * 1000)
                progress.advance(task)
        progress.remove_task(task)
    finally:
        for w in workers.values():
            w.close()
    for s in systems:
        out[s.name].scale_disk_bytes = folder_bytes(_store(plan, s, "scale"))
