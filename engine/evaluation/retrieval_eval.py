"""Evidence recall@k of retrieval alone (no model): hybrid vs dense-only vs BM25-only, at the
summary and the segment level, each hit mapped to the dialogue turns behind it: a summary to its
own source turns, a segment to its turns. Summaries are also scored the pre-provenance way, each
credited with every turn of its segment, in rows labelled as such (`credit`). The flat baselines
over raw turns (`level="turn"`: dense is naive RAG's ranking) are scored beside them.

Every row carries the mean tokens of the top-k hits' text, so no recall figure stands without
its cost; `budget` compares the systems at hymem's own per-question cost (`locomo_budget`).
Each question's results are one `RetrievalQuestion`, kept by `retrieval_cache` so a rerun into
the same folder does not search again."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymem.api.internals import store_of
from hymem.core.logging import get_logger
from hymem.core.types import Level
from hymem.evaluation.flat import FlatIndex, Ranker
from hymem.evaluation.locomo_budget import question_budgets, summarise_budgets, turn_index
from hymem.evaluation.metrics import CATEGORY_NAMES, evidence_recall, mean
from hymem.evaluation.progress import make_progress
from hymem.evaluation.questions import eligible_questions
from hymem.evaluation.retrieval_cache import (
    RetrievalCache,
    RetrievalQuestion,
    ScoreRow,
    run_parts,
    store_state,
)
from hymem.evaluation.systems import Credit, hits_to_turn_ids
from hymem.llm.tokens import count_tokens

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.backfill.locomo import LocomoConversation, LocomoQA
    from hymem.llm.roles import ContextItem
    from hymem.search.hybrid import SearchMode

log = get_logger("hymem.evaluation.retrieval_eval")

MODES: tuple[SearchMode, ...] = ("hybrid", "dense", "lexical")
LEVELS = (Level.SUMMARY, Level.SEGMENT)
KS = (5, 10)
CREDITS: tuple[Credit, ...] = ("source", "segment")
# The flat rankers under the names of the store's search modes, so rows line up by mode.
FLAT_MODES: dict[str, Ranker] = {"hybrid": "hybrid", "dense": "dense", "lexical": "bm25"}

Key = tuple[str, str, str, int]
Scores = dict[Key, list[tuple[int, float, int]]]  # (category, recall, tokens) per question


def retrieval_stage(
    mem: Memory,
    convs: Sequence[LocomoConversation],
    manifest: Mapping[str, Any],
    out: Path,
    *,
    adversarial: bool = False,
    limit: int | None = None,
    per_category: int | None = None,
    show_progress: bool = True,
) -> RetrievalCache:
    """A run's retrieval-recall stage: retrieval.json in `out`, each question scored once per
    configuration and store state (rows kept in retrieval_questions.jsonl, `retrieval_cache`);
    returns the cache, which counts what was scored now and what was reused."""

    def state(conversation: str) -> dict[str, Any]:
        path = out / "ingest" / f"{conversation}.json"
        ingest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        return store_state(ingest, store_of(mem).counts(conversation))

    cache = RetrievalCache(out, run_parts(manifest, KS), state)
    retrieval = evaluate_retrieval(
        mem,
        convs,
        adversarial=adversarial,
        limit=limit,
        per_category=per_category,
        ks=KS,
        cache=cache,
        show_progress=show_progress,
    )
    (out / "retrieval.json").write_text(json.dumps(retrieval, indent=2), encoding="utf-8")
    log.info("eval.retrieval", computed=cache.computed, reused=cache.reused)
    return cache


def evaluate_retrieval(
    mem: Memory,
    convs: Sequence[LocomoConversation],
    *,
    adversarial: bool = False,
    limit: int | None = None,
    per_category: int | None = None,
    ks: Sequence[int] = KS,
    cache: RetrievalCache | None = None,
    show_progress: bool = True,
) -> dict[str, Any]:
    """{"rows": [{level, mode, credit, k, recall, tokens, n, by_category}], "questions": n,
    "budget": matched-budget summary, "budget_questions": its per-question rows}. A question
    `cache` holds under its conversation's current fingerprint is not searched again; one
    scored now is put there."""
    per_conv = [
        (
            conv,
            [
                (i, qa)
                for i, qa in eligible_questions(
                    conv, adversarial=adversarial, limit=limit, per_category=per_category
                )
                if qa.evidence
            ],
        )
        for conv in convs
    ]
    if cache is not None:
        cache.prune({conv.sample_id for conv in convs})
    results: list[RetrievalQuestion] = []
    with make_progress(show_progress) as progress:
        task = progress.add_task("retrieval recall", total=sum(len(qs) for _, qs in per_conv))
        for conv, questions in per_conv:
            index: FlatIndex[ContextItem] | None = None  # built (turns embedded) on first need
            for idx, qa in questions:
                row = cache.get(conv.sample_id, idx) if cache is not None else None
                if row is None:
                    if index is None:
                        index = turn_index(mem, conv)
                    row = score_question(mem, conv, idx, qa, index, ks)
                    if cache is not None:
                        row = cache.put(row)
                results.append(row)
                progress.advance(task)
    return summarise_questions(results)


def score_question(
    mem: Memory,
    conv: LocomoConversation,
    idx: int,
    qa: LocomoQA,
    index: FlatIndex[ContextItem],
    ks: Sequence[int] = KS,
) -> RetrievalQuestion:
    """One question's recall@k and tokens at every (level, mode, credit) and its matched-budget
    row. One search at the largest k per (level, mode); smaller k are its prefixes, as top-k
    lists are."""
    return RetrievalQuestion(
        conversation=conv.sample_id,
        qa_index=idx,
        category=qa.category,
        scores=[*_score_store(mem, conv.sample_id, qa, ks), *_score_flat(index, qa, ks)],
        budget=question_budgets(mem, conv, idx, qa, index),
    )


def summarise_questions(results: Sequence[RetrievalQuestion]) -> dict[str, Any]:
    """The stage's output from its per-question rows (pure; fresh and reused rows alike)."""
    scores: Scores = {}
    for res in results:
        for level, mode, credit, k, recall, tokens in res.scores:
            scores.setdefault((level, mode, credit, k), []).append((res.category, recall, tokens))
    budget_rows = [res.budget for res in results]
    return {
        "questions": len(results),
        "rows": _rows(scores),
        "budget": summarise_budgets(budget_rows),
        "budget_questions": budget_rows,
    }


def _score_store(mem: Memory, user_id: str, qa: LocomoQA, ks: Sequence[int]) -> list[ScoreRow]:
    """recall@k and tokens of hymem's summary and segment search, in every mode."""
    out: list[ScoreRow] = []
    for level in LEVELS:
        for mode in MODES:
            hits = mem.search(qa.question, user_id=user_id, k=max(ks), level=level, mode=mode)
            counts = [count_tokens(h.text) for h in hits]
            credits = CREDITS if level is Level.SUMMARY else CREDITS[:1]
            for k, credit in ((k, c) for k in ks for c in credits):
                turns = hits_to_turn_ids(mem, hits[:k], user_id, credit=credit)
                r = evidence_recall(qa.evidence, turns)
                if r is not None:
                    out.append((level.value, mode, credit, k, r, sum(counts[:k])))
    return out


def _score_flat(index: FlatIndex[ContextItem], qa: LocomoQA, ks: Sequence[int]) -> list[ScoreRow]:
    """recall@k and tokens of the flat baselines' top-k raw turns."""
    out: list[ScoreRow] = []
    for mode, ranker in FLAT_MODES.items():
        ranking = index.rank(ranker, qa.question)
        for k in ks:
            r = evidence_recall(qa.evidence, ranking[:k])
            if r is not None:
                tokens = sum(index.tokens(i) for i in ranking[:k])
                out.append(("turn", mode, "source", k, r, tokens))
    return out


def _rows(scores: Scores) -> list[dict[str, Any]]:
    rows = []
    for (level, mode, credit, k), vals in sorted(scores.items()):
        by_cat: dict[str, float | None] = {}
        for cat in sorted({c for c, _, _ in vals}):
            by_cat[CATEGORY_NAMES.get(cat, str(cat))] = mean(r for c, r, _ in vals if c == cat)
        rows.append(
            {
                "level": level,
                "mode": mode,
                "credit": credit,
                "k": k,
                "recall": mean(r for _, r, _ in vals),
                "tokens": mean(t for _, _, t in vals),
                "n": len(vals),
                "by_category": by_cat,
            }
        )
    return rows
