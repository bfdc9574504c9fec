"""Two `hymem eval locomo` runs on the same sample, side by side: a model's against a baseline's.

For each system of the runs (hymem, naive RAG, ...): questions, F1, judge accuracy (the judge
named in the run, e.g. the local model judging itself: labelled as such), escalation rate,
model tokens and calls per answer, latency p50/p95, answers with a fallback, and for hymem the
share of its judge-correct answers the light path gave without escalating. Then the model's
role calls and fallbacks (a fallback is a reply that never validated, or a failed call):
parse rate per role, and the summariser's from the ingest record.

    python benchmarks/local_model_compare.py runs/local-conv26 runs/extractive-conv26
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from hymem.evaluation.predictions import PredictionRecord, read_predictions


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def system_rows(run: Path) -> dict[str, dict[str, Any]]:
    by_system: dict[str, list[PredictionRecord]] = {}
    for rec in read_predictions(run / "predictions.jsonl"):
        by_system.setdefault(rec.system, []).append(rec)
    rows = {}
    for system, recs in sorted(by_system.items()):
        judged = [r for r in recs if r.judge_correct is not None]
        correct = [r for r in judged if r.judge_correct]
        light_correct = [r for r in correct if not r.escalated]
        rows[system] = {
            "n": len(recs),
            "f1": 100 * statistics.mean(r.f1 for r in recs),
            "judge": 100 * len(correct) / len(judged) if judged else None,
            "escalated": 100 * sum(r.escalated for r in recs) / len(recs),
            "tokens": statistics.mean(r.tokens for r in recs),
            "calls": statistics.mean(r.calls for r in recs),
            "context": statistics.mean(r.context_tokens for r in recs),
            "p50_s": _pct([r.latency_ms for r in recs], 0.5) / 1000,
            "p95_s": _pct([r.latency_ms for r in recs], 0.95) / 1000,
            "fallback": 100 * sum(bool(r.fallbacks) for r in recs) / len(recs),
            "light_of_correct": 100 * len(light_correct) / len(correct) if correct else None,
            "backend": recs[0].backend,
        }
    return rows


def role_rows(run: Path) -> tuple[Counter[str], Counter[str]]:
    """Model calls per role group and fallbacks per role, over hymem's answers."""
    calls: Counter[str] = Counter()
    fallbacks: Counter[str] = Counter()
    for rec in read_predictions(run / "predictions.jsonl"):
        if rec.system != "hymem":
            continue
        calls["light (light_answer)"] += rec.light_calls
        calls["deep (select, deep_answer)"] += rec.deep_calls
        calls["reflect"] += rec.reflect_calls
        for f in rec.fallbacks:
            fallbacks[f.split(":", 1)[0]] += 1
    return calls, fallbacks


def ingest_rows(run: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in sorted((run / "ingest").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out[path.stem] = {
            k: data.get(k)
            for k in ("turns", "segments", "summaries", "summarise_fallbacks", "seconds", "usage")
            if k in data
        }
    return out


def _fmt(v: Any, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_run", type=Path)
    parser.add_argument("baseline_run", type=Path)
    args = parser.parse_args()
    print(" ".join(sys.argv))
    runs = {"model": args.model_run, "baseline": args.baseline_run}
    head = (
        "| run | system | backend | n | F1 | judge % | escalated % | tokens/answer | calls | "
        "context tokens | p50 s | p95 s | with fallback % | light share of correct % |"
    )
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for label, run in runs.items():
        for system, r in system_rows(run).items():
            print(
                f"| {label} | {system} | {r['backend']} | {r['n']} | {r['f1']:.1f} | "
                f"{_fmt(r['judge'])} | {r['escalated']:.0f} | {r['tokens']:.0f} | "
                f"{r['calls']:.1f} | {r['context']:.0f} | {r['p50_s']:.1f} | {r['p95_s']:.1f} | "
                f"{r['fallback']:.0f} | {_fmt(r['light_of_correct'], '.0f')} |"
            )
    calls, fallbacks = role_rows(args.model_run)
    print("\nhymem's model calls on the model run, by role group:", dict(calls))
    print("fallbacks by role (replies that never validated, or failed calls):", dict(fallbacks))
    for label, run in runs.items():
        for conv, data in ingest_rows(run).items():
            print(f"ingest ({label}, {conv}): {json.dumps(data)}")


if __name__ == "__main__":
    main()
