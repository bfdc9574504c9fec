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

Each piece and its alternatives were measured on LoCoMo's development conversations before it
was kept. The ranking is pure, over typed `Candidate`s; `hymem.search.light_context` reads
what it ranks through the searcher, and the reader calls that once per light retrieval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from hymem.core.types import Hit
from hymem.search.anchors import Anchors
from hymem.search.fusion import reciprocal_rank_fusion

LIGHT_POOL = 100  # summaries of the question's hybrid search the fusion sees
LIGHT_SEGMENTS = 40  # segments of its segment search
LIGHT_ASPECT = 200  # summaries of the aspect's dense search (300 read no more evidence)
LIGHT_RRF_K = 60  # deep lists (100-300): the paper's k keeps their tails from dominating
SEGMENT_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class Candidate:
    """A summary as the light ranking reads it: its id, its text (where anchors are named)
    and the segment it was taken from."""

    id: str
    text: str
    segment_id: str


def light_ranking(
    hybrid: Sequence[Candidate],
    segments: Sequence[str],
    aspect: Sequence[Candidate],
    anchors: Anchors,
) -> list[tuple[str, float]]:
    """Summary ids best first with their fused score, from the four lists: the hybrid
    ranking, the segment ranking (segment ids; each hybrid summary at its segment's rank),
    the aspect's dense ranking, and the part of it that names one of the question's
    `anchors`. Ids out, so rows are read into hits for the few the budget takes only."""
    seg_rank = {s: n for n, s in enumerate(segments, start=1)}
    by_segment = sorted(
        (c for c in hybrid if c.segment_id in seg_rank), key=lambda c: seg_rank[c.segment_id]
    )
    named = [c.id for c in aspect if anchors.named_in(c.text)]
    return reciprocal_rank_fusion(
        [[c.id for c in hybrid], [c.id for c in by_segment], [c.id for c in aspect], named],
        k=LIGHT_RRF_K,
        weights=[1.0, SEGMENT_WEIGHT, 1.0, 1.0],
    )


def fill_tokens(
    ranked: Iterable[tuple[Hit, float]], budget: int, count: Callable[[str], int]
) -> list[Hit]:
    """Hits by rank, each adding a source turn, until the next would pass `budget` tokens
    of text (a first hit over the budget alone is skipped, not read whole); each read hit's
    `fused_score` is its light rank's. `ranked` may be lazy: it is read only as far as the
    budget goes."""
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
    "Candidate",
    "fill_tokens",
    "light_ranking",
]
