"""The retrieval lab: score light-path retrieval configurations on the development splits in
seconds, against stores ingested once (`lab_stores.py`).

    python benchmarks/retrieval_lab.py locomo                       # every variant
    python benchmarks/retrieval_lab.py locomo --variant engine      # what ask() reads today
    python benchmarks/retrieval_lab.py locomo --conversations conv-26 conv-30
    python benchmarks/retrieval_lab.py longmemeval                  # 12 questions, every type

A variant is a named set of `MemoryConfig` light-path settings; every variant is scored through
`Memory.context(depth="light")`, the exact context `ask()` reads on its light path, so what the
lab measures is what ships. Recall is honest (a summary hit is credited with its own source
turns only, `hits_to_turn_ids`), tokens are counted on the hits' text as the model would read
it, and latency is the wall time of each `context` call. Output: one row per variant (recall
overall and by category, mean tokens, hits, turns per hit, p50 latency), the target row
(recall 0.90 at <= 400 tokens, multi-hop 0.75, open-domain 0.70) beside it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hymem.evaluation.longmemeval.metrics import evidence_of
from hymem.evaluation.longmemeval.systems import (
    MAX_SEARCH_K,
    QuestionRetriever,
    score_ranking,
)
from hymem.evaluation.metrics import CATEGORY_NAMES, evidence_recall
from hymem.evaluation.runner import eligible_questions
from hymem.evaluation.systems import hits_to_turn_ids
from hymem.llm.tokens import count_tokens
from lab_stores import (
    lab_config,
    locomo_conversations,
    locomo_store,
    longmemeval_questions,
    longmemeval_store,
)
from rich.console import Console
from rich.table import Table

# name -> MemoryConfig overrides of the light path (the engine's own settings, nothing else).
VARIANTS: dict[str, dict[str, Any]] = {
    "engine": {},  # the defaults: the fused light rank filling light_tokens=400
    "top10": {"light_tokens": 0},  # before issue 29: the top k=10 distinct sources
    "budget600": {"light_tokens": 600},
}
TARGET = {"recall": 0.90, "tokens": 400, "multi_hop": 0.75, "open_domain": 0.70}
CATS = ("single_hop", "multi_hop", "temporal", "open_domain")


def score_locomo(variant: str, conversations: list[str] | None) -> dict[str, Any]:
    overrides = VARIANTS[variant]
    mem = locomo_store(lab_config(**overrides))
    rows: list[dict[str, Any]] = []
    try:
        for conv in locomo_conversations():
            if conversations and conv.sample_id not in conversations:
                continue
            for _, qa in eligible_questions(conv, adversarial=False, limit=None):
                if not qa.evidence:
                    continue
                t0 = time.perf_counter()
                hits = mem.context(qa.question, user_id=conv.sample_id, depth="light")
                ms = (time.perf_counter() - t0) * 1000
                turns = hits_to_turn_ids(mem, hits, conv.sample_id)
                rows.append(
                    {
                        "cat": CATEGORY_NAMES.get(qa.category, str(qa.category)),
                        "recall": evidence_recall(qa.evidence, turns),
                        "tokens": sum(count_tokens(h.text) for h in hits),
                        "hits": len(hits),
                        "turns_per_hit": [len(h.turn_ids) for h in hits],
                        "ms": ms,
                    }
                )
    finally:
        mem.close()
    return summarise(variant, rows)


LME_SYSTEMS = ("hymem-light", "hymem-summary", "dense-turn", "hybrid-session")
LME_METRICS = (("session", "recall_all@5"), ("turn", "recall_any@10"))


def score_longmemeval(variant: str) -> dict[str, Any]:
    """The harness's own ranking and metrics (`QuestionRetriever`, `score_ranking`) for the
    light path, hymem's summary search and two flat baselines, on the lab's questions."""
    # the harness's own setting: hymem's rankings go as deep as a haystack needs
    mem = longmemeval_store(lab_config(**{"max_k": MAX_SEARCH_K, **VARIANTS[variant]}))
    scores: dict[tuple[str, str, str], list[float]] = {}
    tokens: list[int] = []
    ms: list[float] = []
    try:
        for q in longmemeval_questions():
            if q.abstention:
                continue
            evidence = evidence_of(q)
            retriever = QuestionRetriever(mem, q, rrf_k=mem.config.rrf_k)
            for system in LME_SYSTEMS:
                ranked = retriever.rank(system)
                record = score_ranking(q, evidence, ranked)
                if system == "hymem-light":
                    tokens.append(sum(record.unit_tokens))
                    ms.append(ranked.latency_ms)
                for level, metric in LME_METRICS:
                    if level in record.metrics:
                        key = (system, level, metric)
                        scores.setdefault(key, []).append(record.metrics[level][metric])
    finally:
        mem.close()
    out: dict[str, Any] = {"variant": variant, "light_tokens": statistics.fmean(tokens)}
    out["light_p50_ms"] = statistics.median(ms)
    out["scores"] = {"/".join(k): statistics.fmean(v) for k, v in scores.items()}
    out["n"] = max(len(v) for v in scores.values())
    return out


def show_longmemeval(results: list[dict[str, Any]]) -> None:
    table = Table(title="LongMemEval-S dev (lab questions): the harness's metrics")
    cols = [f"{s} {lvl} {m}" for s in LME_SYSTEMS for lvl, m in LME_METRICS]
    table.add_column("variant")
    for col in cols:
        table.add_column(col, justify="right")
    table.add_column("light tokens", justify="right")
    table.add_column("light p50 ms", justify="right")
    for r in results:
        cells = [
            f"{r['scores'].get(f'{s}/{lvl}/{m}', float('nan')):.3f}"
            for s in LME_SYSTEMS
            for lvl, m in LME_METRICS
        ]
        table.add_row(
            f"{r['variant']} (n={r['n']})",
            *cells,
            f"{r['light_tokens']:.0f}",
            f"{r['light_p50_ms']:.1f}",
        )
    Console().print(table)
    print(json.dumps(results, indent=1))


def summarise(variant: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in rows if r["recall"] is not None]
    per_hit = [n for r in rows for n in r["turns_per_hit"]]
    out: dict[str, Any] = {
        "variant": variant,
        "questions": len(scored),
        "recall": statistics.fmean(r["recall"] for r in scored),
        "tokens": statistics.fmean(r["tokens"] for r in rows),
        "hits": statistics.fmean(r["hits"] for r in rows),
        "turns_per_hit": statistics.fmean(per_hit) if per_hit else 0.0,
        "p50_ms": statistics.median(r["ms"] for r in rows),
    }
    for cat in CATS:
        vals = [r["recall"] for r in scored if r["cat"] == cat]
        out[cat] = statistics.fmean(vals) if vals else None
    return out


def show(results: list[dict[str, Any]]) -> None:
    table = Table(title="LoCoMo dev: the light path's context (Memory.context depth=light)")
    for col in ("variant", "recall", *CATS, "tokens", "hits", "turns/hit", "p50 ms"):
        table.add_column(col, justify="right" if col != "variant" else "left")
    table.add_row(
        "target",
        f"{TARGET['recall']:.2f}",
        "",
        f"{TARGET['multi_hop']:.2f}",
        "",
        f"{TARGET['open_domain']:.2f}",
        f"<= {TARGET['tokens']}",
        "",
        "",
        "<= 1.5x engine",
    )
    for r in results:
        table.add_row(
            r["variant"],
            f"{r['recall']:.3f}",
            *(f"{r[c]:.3f}" if r[c] is not None else "-" for c in CATS),
            f"{r['tokens']:.0f}",
            f"{r['hits']:.1f}",
            f"{r['turns_per_hit']:.2f}",
            f"{r['p50_ms']:.1f}",
        )
    Console().print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", choices=["locomo", "longmemeval"])
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    parser.add_argument("--conversations", nargs="*")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    variants = args.variant or list(VARIANTS)
    if args.dataset == "longmemeval":
        results = [score_longmemeval(v) for v in variants]
        show_longmemeval(results)
    else:
        results = [score_locomo(v, args.conversations) for v in variants]
        show(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
