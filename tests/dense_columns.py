"""Columns for the dense cache's tests: n random unit-test rows, every field overridable."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
from hymem.core.time import micros
from hymem.indexes.dense.cache import STATUS_CODES, Columns, SummaryLink

T0 = datetime(2024, 1, 1)
ACTIVE, SUPERSEDED = STATUS_CODES["active"], STATUS_CODES["superseded"]


def cols(n: int, dim: int = 8, seed: int = 0, prefix: str = "r", **over: object) -> Columns:
    rng = np.random.default_rng(seed)
    times = np.asarray([micros(T0 + timedelta(days=i)) for i in range(n)], dtype=np.int64)
    base = {
        "ids": [f"{prefix}{i}" for i in range(n)],
        "vectors": rng.standard_normal((n, dim)).astype(np.float32),
        "status": np.full(n, ACTIVE, dtype=np.int8),
        "lo": times,
        "hi": times,
        "dated": np.ones(n, dtype=bool),
        "text": [f"text of {prefix}{i}" for i in range(n)],
        "link": [SummaryLink(f"seg{i // 4}", (f"t{i}",), "source") for i in range(n)],
    }
    base.update(over)
    base.setdefault("has_start", np.asarray(base["dated"], dtype=bool))
    base.setdefault("has_end", np.asarray(base["dated"], dtype=bool))
    return Columns(**base)  # type: ignore[arg-type]
