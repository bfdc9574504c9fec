"""A hymem store filled with given texts and precomputed vectors, for the 100k search
latency: committed the way `benchmarks/retrieval_data.py` fills its stores (records built
directly, one Level-2 segment per 50 summaries), so no summariser or embedder runs."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np
from hymem.core.types import SegmentRecord, SummaryRecord

PER_SEGMENT = 50
BATCH = 10_000


def fill_store(store: Any, user: str, texts: list[str], vectors: np.ndarray) -> None:
    t0 = datetime(2023, 1, 1)
    for start in range(0, len(texts), BATCH):
        segs: list[SegmentRecord] = []
        sums: list[SummaryRecord] = []
        for i in range(start, min(len(texts), start + BATCH)):
            when = t0 + timedelta(hours=i)
            vec = vectors[i].tolist()
            seg_id = f"{user}-g{i // PER_SEGMENT}"
            if not segs or segs[-1].id != seg_id:
                segs.append(
                    SegmentRecord.model_construct(
                        id=seg_id,
                        user_id=user,
                        session_ids=["s"],
                        turn_ids=[],
                        text=f"A: {texts[i]}",
                        time_start=when,
                        time_end=when,
                        token_count=20,
                        compressed_text=None,
                        vector=vec,
                        created_at=when,
                    )
                )
            sums.append(
                SummaryRecord.model_construct(
                    id=f"m{i}",
                    user_id=user,
                    segment_id=seg_id,
                    text=texts[i],
                    vector=vec,
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
        store.commit_segments(user, segs, sums, [])
