"""What the read path reads (pure): the light path's distinct summaries, and the deep path's
candidate pool of summary hits and segment hits in one ranked list.

Several summaries often come from one turn (a long reply keeps up to four facts), so the light
path's top k could stand for only a few turns. `distinct_sources` skips a hit whose source turns
earlier hits already cover, reading down a slightly deeper list, so k summaries stand for as
many turns as they can (+1 point of LoCoMo evidence recall@10).

A Level-2 segment can end up with no Level-1 summary: a summariser may find nothing worth
keeping in it (a greeting, a one-line reply), or the builder drops facts already seen in the
buffer. When the deep path reached raw dialogue only through summaries, such a segment was
invisible to `ask()`. So the pool fuses two ranked lists by reciprocal rank, with equal weight
per level (the documented rule; a segment is also read whole once chosen, so neither level is
privileged; ties go to the summary): the summary search and a segment search over the raw text.

A segment hit adds nothing when a summary of the same segment ranks above it (choosing that
summary already reads the segment), so it is dropped there. A kept segment is shown to the
select role as a snippet, its lines that share most words with the query, so a batch stays a
prompt of summaries' size; the full text is read from the store once it is chosen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hymem.core.types import Hit, Level
from hymem.indexes.lexical.analysis import content_terms
from hymem.read.scheduler import ReadPlan
from hymem.search.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from hymem.search.light import LIGHT_POOL

LIGHT_EXTRA = 10  # the light path reads this many hits past k to replace repeats
SNIPPET_LINES = 2  # a segment's best-matching lines shown to the select role
SNIPPET_CHARS = 320  # and at most this much of them
SNIPPET_JOIN = " … "  # one line: the select prompt lists one candidate per line

_LINE_SPLIT = re.compile(r"\n+")


def summary_depth(plan: ReadPlan) -> int:
    """How many summaries one round of `plan` may read: the light path's k plus the hits it
    reads past k (`LIGHT_EXTRA`), and, where the round may escalate, the deep pool's N. One
    search of that many serves both reads, each cut to its own size."""
    light = LIGHT_POOL if plan.light_tokens else plan.k + LIGHT_EXTRA
    deep = plan.n_deep
    return {"light": light, "deep": deep}.get(plan.depth, max(light, deep))


def distinct_sources(hits: Sequence[Hit], k: int) -> list[Hit]:
    """The first `k` hits that each add a source turn (a hit without turns always counts)."""
    out: list[Hit] = []
    seen: set[str] = set()
    for hit in hits:
        turns = set(hit.turn_ids)
        if turns and turns <= seen:
            continue
        seen |= turns
        out.append(hit)
        if len(out) >= k:
            break
    return out


def snippet(
    text: str, query: str, *, lines: int = SNIPPET_LINES, chars: int = SNIPPET_CHARS
) -> str:
    """The `lines` lines of `text` sharing most query words, in their order, on one line, cut
    to `chars`."""
    all_lines = [ln.strip() for ln in _LINE_SPLIT.split(text) if ln.strip()]
    if len(all_lines) <= lines:
        chosen = all_lines
    else:
        wanted = set(content_terms(query))
        overlap = [len(wanted & set(content_terms(ln))) for ln in all_lines]
        best = sorted(range(len(all_lines)), key=lambda i: (-overlap[i], i))[:lines]
        chosen = [all_lines[i] for i in sorted(best)]
    out = SNIPPET_JOIN.join(chosen)
    return out if len(out) <= chars else out[: chars - 1].rstrip() + "…"


def fuse_candidates(
    summaries: Sequence[Hit],
    segments: Sequence[Hit],
    n: int,
    query: str,
    *,
    rrf_k: int = DEFAULT_RRF_K,
) -> list[Hit]:
    """The top `n` of both lists fused by rank, segment hits shown as snippets and dropped
    where a summary of the same segment ranks above them."""
    by_id: dict[str, Hit] = {h.id: h for h in summaries}
    by_id.update({h.id: h for h in segments if h.id not in by_id})
    fused = reciprocal_rank_fusion([[h.id for h in summaries], [h.id for h in segments]], k=rrf_k)
    # On a tie the summary goes first: it is the shorter read for the select role.
    fused.sort(key=lambda pair: (-pair[1], by_id[pair[0]].level != Level.SUMMARY))
    out: list[Hit] = []
    reached: set[str] = set()  # segments some earlier candidate already reads
    for hit_id, score in fused:
        hit = by_id[hit_id]
        if hit.level == Level.SEGMENT and hit.segment_id in reached:
            continue
        if hit.level == Level.SEGMENT:
            hit = hit.model_copy(update={"text": snippet(hit.text, query)})
        reached.add(hit.segment_id)
        out.append(hit.model_copy(update={"fused_score": score}))
        if len(out) >= n:
            break
    return out


__all__ = [
    "LIGHT_EXTRA",
    "SNIPPET_CHARS",
    "SNIPPET_LINES",
    "distinct_sources",
    "fuse_candidates",
    "snippet",
]
