"""Topic segmentation of a run of turns (LightMem §3.1, App. C.1). Pure: no models, no disk.

Boundaries are turn indices: boundary `b` means a new segment starts at turn `b`.

* Similarity boundaries: `sims[i]` is the cosine similarity of turns i and i+1; a drop below τ
  puts a boundary at i+1.
* Attention boundaries (when the LLMLingua-2 model is loaded): `adjacent[i]` is the attention of
  turn i to turn i-1 (defined for i >= 1); a local peak at i puts a boundary at i. LightMem keeps
  a peak sentence as the start of a new topic.
* With both, the topic boundaries are their intersection (LightMem's B = B1 ∩ B2): an attention
  peak is kept when the similarity next to it (within `tolerance` turns) is below τ.
* Session changes are always boundaries, whatever the scores say.
* A maximum size (turns and tokens) cuts any segment that grows past it; a single turn larger than
  the token bound stays whole (a turn is never split).
* Overlap: each segment may also carry the first `overlap` turns of the next segment of the same
  session as trailing context (its "tail"). Tails are context only: the turns belong to, and are
  marked stored by, the segment whose core holds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Span:
    """Turns [start, end) form the core; [end, tail_end) is overlap context from the next one."""

    start: int
    end: int
    tail_end: int

    @property
    def core(self) -> range:
        return range(self.start, self.end)

    @property
    def all(self) -> range:
        return range(self.start, self.tail_end)


def adjacent_similarities(vectors: Sequence[Sequence[float]] | np.ndarray) -> list[float]:
    """Cosine similarity of each turn with the next (rows are expected L2-normalised)."""
    mat = np.asarray(vectors, dtype=np.float64)
    if len(mat) < 2:
        return []
    sims: list[float] = np.einsum("ij,ij->i", mat[:-1], mat[1:]).tolist()
    return sims


def similarity_boundaries(sims: Sequence[float], tau: float) -> set[int]:
    """Boundary before turn i+1 wherever sims[i] < tau."""
    return {i + 1 for i, s in enumerate(sims) if s < tau}


def local_peaks(values: Sequence[float | None]) -> set[int]:
    """Indices whose value is strictly above both neighbours (a missing neighbour counts as
    lower; None entries are never peaks). LightMem App. C.1's rule for the attention sequence."""
    peaks: set[int] = set()
    for i, v in enumerate(values):
        if v is None:
            continue
        left = values[i - 1] if i > 0 else None
        right = values[i + 1] if i + 1 < len(values) else None
        if (left is None or v > left) and (right is None or v > right):
            peaks.add(i)
    return peaks


def attention_peak_boundaries(adjacent: Sequence[float | None]) -> set[int]:
    """adjacent[i] = attention of turn i to turn i-1 (adjacent[0] is None): peaks at i >= 1."""
    return {i for i in local_peaks(adjacent) if i >= 1}


def intersect_boundaries(
    attention: set[int], sims: Sequence[float], tau: float, *, tolerance: int = 1
) -> set[int]:
    """Attention boundaries confirmed by a similarity drop at most `tolerance` turns away.

    The boundary stays where attention put it: similarity only vetoes peaks caused by attention
    sinks or dilution (LightMem: "similarity between adjacent turns near each candidate")."""
    drops = similarity_boundaries(sims, tau)
    return {b for b in attention if any(b + d in drops for d in range(-tolerance, tolerance + 1))}


def plan_segments(
    *,
    sims: Sequence[float],
    session_ids: Sequence[str],
    token_counts: Sequence[int],
    tau: float,
    max_turns: int,
    max_tokens: int,
    overlap: int = 0,
    attention: set[int] | None = None,
    tolerance: int = 1,
) -> list[Span]:
    """Split n turns into topic segments; see the module docstring for the rules."""
    n = len(session_ids)
    if len(token_counts) != n or (n and len(sims) != n - 1):
        raise ValueError("sims must have n-1 entries and token_counts n entries")
    if max_turns < 1 or max_tokens < 1 or not 0 <= overlap <= 2:
        raise ValueError("max_turns and max_tokens must be >= 1 and overlap in 0..2")
    if n == 0:
        return []
    topic = (
        similarity_boundaries(sims, tau)
        if attention is None
        else intersect_boundaries(attention, sims, tau, tolerance=tolerance)
    )
    topic |= {i for i in range(1, n) if session_ids[i] != session_ids[i - 1]}
    cores: list[tuple[int, int]] = []
    start, tokens = 0, token_counts[0]
    for i in range(1, n):
        size_cut = i - start >= max_turns or tokens + token_counts[i] > max_tokens
        if i in topic or size_cut:
            cores.append((start, i))
            start, tokens = i, 0
        tokens += token_counts[i]
    cores.append((start, n))
    spans = []
    for idx, (s, e) in enumerate(cores):
        tail = e
        if idx + 1 < len(cores):
            nxt_e = cores[idx + 1][1]
            while tail < min(e + overlap, nxt_e) and session_ids[tail] == session_ids[s]:
                tail += 1
        spans.append(Span(s, e, tail))
    return spans
