"""Synthetic summaries for `retrieval_latency.py`: sentences from a small vocabulary, the
queries asked of them, and the two ways of filling a store with them (through commits, or bulk
straight into LanceDB for the 1M run)."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
from hymem.core.types import SegmentRecord, SummaryRecord
from hymem.indexes.store.store import Store
from tqdm import tqdm

NAMES = [
    "Caroline",
    "Melanie",
    "John",
    "Maria",
    "Dave",
    "Priya",
    "Tom",
    "Aiko",
    "Omar",
    "Lena",
    "Jon",
    "Gina",
    "Sam",
    "Evan",
    "Nate",
    "Joanna",
    "Tim",
    "Audrey",
    "Andrew",
    "Deborah",
]
VERBS = [
    "went to",
    "talked about",
    "signed up for",
    "painted",
    "visited",
    "cooked for",
    "wrote a poem about",
    "planned a trip to",
    "bought tickets for",
    "volunteered at",
    "took photos of",
    "read a book about",
    "ran a race near",
    "adopted a dog from",
]
THINGS = [
    "the LGBTQ support group",
    "a pottery class",
    "the beach in Florida",
    "a camping trip",
    "the charity run",
    "her grandmother's house",
    "an art museum",
    "a jazz concert",
    "the adoption agency",
    "a yoga retreat",
    "the farmers market",
    "his new startup",
    "a violin lesson",
    "the mountains",
    "a family reunion",
    "the local library",
    "a baking contest",
    "a hiking trail",
    "the animal shelter",
    "a science fair",
]
WHEN = [
    "in May 2023",
    "last summer",
    "on 7 May 2023",
    "in early June",
    "during the holidays",
    "in 2022",
    "on a rainy Sunday",
    "after work",
    "with friends",
    "with the kids",
]
TAGS = [f"tag{i}" for i in range(5000)]
QUESTION = [
    "When did {n} go to {t}?",
    "What did {n} do at {t}?",
    "Who {v} {t}?",
    "Did {n} enjoy {t}?",
    "{n} {t}",
]


def sentences(n: int, rng: np.random.Generator) -> list[str]:
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    return [f"{pick(NAMES)} {pick(VERBS)} {pick(THINGS)} {pick(WHEN)}." for _ in range(n)]


def queries(n: int, rng: np.random.Generator) -> list[str]:
    out = []
    for _ in range(n):
        tpl = QUESTION[int(rng.integers(len(QUESTION)))]
        out.append(
            tpl.format(
                n=NAMES[int(rng.integers(len(NAMES)))],
                v=VERBS[int(rng.integers(len(VERBS)))],
                t=THINGS[int(rng.integers(len(THINGS)))],
            )
        )
    return out


def noisy_vectors(base_vec: np.ndarray, base: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The base sentences' vectors plus Gaussian noise (sigma 0.02), re-normalised: distinct
    vectors whose near-duplicate clusters look like paraphrases."""
    vecs = base_vec[base] + rng.normal(0, 0.02, (len(base), base_vec.shape[1])).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs


def fill(
    store: Store,
    n: int,
    users: int,
    base_text: list[str],
    base_vec: np.ndarray,
    rng: np.random.Generator,
    batch: int = 10_000,
) -> dict[str, np.ndarray]:
    """Commit n summaries; returns each user's vectors (row order = summary index order)."""
    t0 = datetime(2023, 1, 1)
    per_user: dict[str, list[np.ndarray]] = {f"user{u}": [] for u in range(users)}
    for start in tqdm(range(0, n, batch), desc=f"fill {n:,}", unit="batch", leave=False):
        idx = np.arange(start, min(n, start + batch))
        base = idx % len(base_text)
        vecs = noisy_vectors(base_vec, base, rng)
        by_user: dict[str, tuple[list[SegmentRecord], list[SummaryRecord]]] = {}
        for row, i in enumerate(idx):
            user = f"user{i % users}"
            segs, sums = by_user.setdefault(user, ([], []))
            when = t0 + timedelta(hours=int(i))
            seg_id = f"{user}-g{i // (50 * users)}"
            if not segs or segs[-1].id != seg_id:
                segs.append(
                    SegmentRecord.model_construct(
                        id=seg_id,
                        user_id=user,
                        session_ids=["s"],
                        turn_ids=[],
                        text=f"[{when}] A: {base_text[base[row]]}",
                        time_start=when,
                        time_end=when,
                        token_count=20,
                        compressed_text=None,
                        vector=vecs[row].tolist(),
                        created_at=when,
                    )
                )
            text = f"{base_text[base[row]]} {TAGS[int(rng.integers(len(TAGS)))]}"
            sums.append(
                SummaryRecord.model_construct(
                    id=f"{user}-s{i}",
                    user_id=user,
                    segment_id=seg_id,
                    text=text,
                    vector=vecs[row].tolist(),
                    time_start=when,
                    time_end=when,
                    topic=None,
                    status="active",
                    version=1,
                    superseded_by=None,
                    previous_id=None,
                    reason=None,
                    evidence_id=None,
                    origin="summary",
                    created_at=when,
                    updated_at=when,
                )
            )
            per_user[user].append(vecs[row])
        for user, (segs, sums) in by_user.items():
            store.commit_segments(user, segs, sums, [])
    store.optimize()
    return {u: np.stack(v) for u, v in per_user.items() if v}


def bulk_fill(
    store: Store,
    n: int,
    users: int,
    base_text: list[str],
    base_vec: np.ndarray,
    rng: np.random.Generator,
    batch: int = 100_000,
) -> dict[str, np.ndarray]:
    """The same rows as `fill`, loaded straight into LanceDB in large batches, then indexed the
    way a store repairs itself (`reindex` rebuilds Tantivy from LanceDB; `optimize` builds the
    scalar and IVF_PQ indexes). For the 1M store only: committing a million summaries through
    the write path would take most of an hour and measures the write path (write_path.py), not
    search."""
    import pyarrow as pa
    from hymem.indexes.lance import schema as S

    t0 = np.datetime64("2023-01-01T00:00:00", "us")
    dim = base_vec.shape[1]
    per_user: dict[str, list[np.ndarray]] = {f"user{u}": [] for u in range(users)}
    lance = store._lance
    for start in tqdm(range(0, n, batch), desc=f"bulk fill {n:,}", unit="batch", leave=False):
        idx = np.arange(start, min(n, start + batch))
        base = idx % len(base_text)
        vecs = noisy_vectors(base_vec, base, rng)
        user_of = [f"user{i % users}" for i in idx]
        seg_of = [f"{u}-g{i // (50 * users)}" for u, i in zip(user_of, idx, strict=True)]
        when = t0 + idx.astype("timedelta64[h]")
        texts = [
            f"{base_text[b]} {TAGS[int(t)]}"
            for b, t in zip(base, rng.integers(len(TAGS), size=len(idx)), strict=True)
        ]
        flat = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dim)
        none = pa.nulls(len(idx), pa.string())
        lance.add(
            S.SUMMARIES,
            pa.table(
                {
                    "id": [f"{u}-s{i}" for u, i in zip(user_of, idx, strict=True)],
                    "user_id": user_of,
                    "segment_id": seg_of,
                    "text": texts,
                    "vector": flat,
                    "time_start": pa.array(when, S.TS),
                    "time_end": pa.array(when, S.TS),
                    "topic": none,
                    "status": ["active"] * len(idx),
                    "version": pa.array(np.ones(len(idx), np.int64)),
                    "superseded_by": none,
                    "previous_id": none,
                    "reason": none,
                    "evidence_id": none,
                    "origin": ["summary"] * len(idx),
                    "source_turn_ids": [[] for _ in idx],
                    "attribution": ["segment"] * len(idx),
                    "context": [""] * len(idx),
                    "created_at": pa.array(when, S.TS),
                    "updated_at": pa.array(when, S.TS),
                },
                schema=S.summaries_schema(dim),
            ),
        )
        first = np.unique(np.asarray(seg_of), return_index=True)[1]
        lance.add(
            S.SEGMENTS,
            pa.table(
                {
                    "id": [seg_of[j] for j in first],
                    "user_id": [user_of[j] for j in first],
                    "session_ids": [["s"]] * len(first),
                    "turn_ids": [[] for _ in first],
                    "text": [f"A: {base_text[base[j]]}" for j in first],
                    "time_start": pa.array(when[first], S.TS),
                    "time_end": pa.array(when[first], S.TS),
                    "token_count": pa.array(np.full(len(first), 20, np.int64)),
                    "compressed_text": pa.nulls(len(first), pa.string()),
                    "vector": pa.FixedSizeListArray.from_arrays(
                        pa.array(vecs[first].reshape(-1)), dim
                    ),
                    "created_at": pa.array(when[first], S.TS),
                },
                schema=S.segments_schema(dim),
            ),
        )
        for u, v in zip(user_of, vecs, strict=True):
            per_user[u].append(v)
    store.reindex()
    store.optimize()
    return {u: np.stack(v) for u, v in per_user.items() if v}
