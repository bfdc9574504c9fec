"""The light path's context under a token budget (pure).

The light path reads summaries, not a fixed count of them: `MemoryConfig.light_tokens`
(default 400) is filled by rank with summaries that each add a source turn. The rank fuses
four lists by weighted reciprocal rank (`LIGHT_RRF_K`):

* the hybrid summary search of the question (dense + BM25, as `search` ranks);
* the segment search of the question, each summary taking its segment's rank (half weight):
  a summary whose raw dialogue matches moves up (granularities fused);
* a dense search of the question's aspect (the question without its anchor names,
  `hymem.search.anchors`), so the words that discriminate decide the ranking;
* the same aspect ranking restricted to hits that name an anchor (the person asked about).

Each piece and its alternatives were measured before it was kept (`benchmarks/lab_rerank.py`,
`benchmarks/retrieval_lab.py`; the ablation table is in benchmarks/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hymem.search.anchors import Anchors
from hymem.search.fusion import reciprocal_rank_fusion
from hymem.types import Hit

LIGHT_POOL = 100  # summaries of the question's hybrid search the fusion sees
LIGHT_SEGMENTS = 40  # segments of its segment search
LIGHT_ASPECT = 200  # summaries of the aspect's dense search (300 read no more evidence)
LIGHT_RRF_K = 60  # deep lists (100-300): the paper's k keeps their tails from dominating
SEGMENT_WEIGHT = 0.5


def light_ranking(
    summaries: Sequence[Hit], segments: Sequence[Hit], aspect: Sequence[Hit], anchors: Anchors
) -> list[tuple[Hit, float]]:
    """Summaries best first with their fused score (the hits as found: `fill_tokens` stamps
    the score on the few it reads)."""
    seg_rank = {h.id: n for n, h in enumerate(segments, start=1)}
    by_segment = sorted(
        (h for h in summaries if h.segment_id in seg_rank), key=lambda h: seg_rank[h.segment_id]
    )
    named = [h.id for h in aspect if anchors.names and anchors.named_in(h.text)]
    fused = reciprocal_rank_fusion(
        [[h.id for h in summaries], [h.id for h in by_segment], [h.id for h in aspect], named],
        k=LIGHT_RRF_K,
        weights=[1.0, SEGMENT_WEIGHT, 1.0, 1.0],
    )
    hits = {h.id: h for h in aspect}
    hits.update((h.id, h) for h in summaries)  # a hybrid hit carries both branches' ranks
    return [(hits[i], score) for i, score in fused]


def fill_tokens(
    ranked: Sequence[tuple[Hit, float]], budget: int, count: Callable[[str], int]
) -> list[Hit]:
    """Hits by rank, each adding a source turn, until the next would pass `budget` tokens
    of text (a first hit over the budget alone is skipped, not read whole); each read hit's
    `fused_score` is its light rank's."""
    out: list[Hit] = []
    seen: set[str] = set()
    used = 0
    for hit, score in ranked:
        turns = set(hit.turn_ids)
        if turns and turns <= seen:
            continue
        cost = count(hit.text)
        if used + cost > budget:
            if out:
                break
            continue
        out.append(hit.model_copy(update={"fused_score": score}))
        seen |= turns
        used += cost
    return out


__all__ = [
    "LIGHT_ASPECT",
    "LIGHT_POOL",
    "LIGHT_RRF_K",
    "LIGHT_SEGMENTS",
    "SEGMENT_WEIGHT",
    "fill_tokens",
    "light_ranking",
]
