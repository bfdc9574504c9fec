"""The construction cost of one unit of a run's ingestion (a LoCoMo conversation, a LongMemEval
question), summed over every invocation that fed it.

A unit whose feed was interrupted has no `ingest/<id>.json`, so the next invocation feeds it
again from its first turn: the turns already stored are recognised by their ids and add nothing,
and only the segments, summaries and model calls the first invocation did not reach are made
now. Counting the last invocation alone therefore reported only part of a clean run's
segments, summaries, calls and tokens. So each add or flush that returned, whose work is in the
store, is counted here and kept in `ingest/partial/<id>.json` (rewritten after every call that
wrote or spent something, and on the way out of an interrupted feed); the next invocation starts
from it, and the unit's record is the sum: the counts of a clean run, `parts` saying how many
invocations fed it, and seconds that add up all of them. Turns are not summed: each invocation
feeds the whole unit, so the last one counts every turn.

Work an interruption cut short before its call returned (a summariser call under way, a commit
rolled back) is not counted, and is done, and counted, once by the next invocation.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from hymem.core.errors import StoreCorruptedError
from hymem.core.logging import get_logger
from hymem.core.types import AddResult, Usage
from hymem.indexes.jsonfile import read_json, write_json_atomic

log = get_logger("hymem.evaluation.ingest_tally")

PARTIAL_DIR = "partial"  # under ingest/, where `*.json` are finished units only


def partial_path(out: Path, unit_id: str) -> Path:
    """Where the cost of a unit's unfinished feed is kept in run folder `out`."""
    return out / "ingest" / PARTIAL_DIR / f"{unit_id}.json"


def _earlier(path: Path | None) -> dict[str, Any]:
    """What earlier invocations recorded at `path`; {} when none did or it cannot be read
    (logged: the unit's counts then start again from this invocation)."""
    if path is None:
        return {}
    try:
        return read_json(path) or {}
    except StoreCorruptedError as exc:
        log.warning("eval.partial_cost_unreadable", path=str(path), error=str(exc))
        return {}


class IngestTally:
    """The cost of feeding one unit so far. `path` None keeps it in memory only (a caller
    that feeds a store outside a run folder). Seconds go to named stages ("ingest" first;
    `stage` starts the next), each summed over the invocations."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        earlier = _earlier(path)
        self.parts = int(earlier.get("parts", 0)) + 1  # this invocation's is the last
        self.segments = int(earlier.get("segments", 0))
        self.summaries = int(earlier.get("summaries", 0))
        self.usage = Usage.model_validate({"roles": earlier.get("usage") or {}})
        self._earlier_s: dict[str, float] = dict(earlier.get("seconds") or {})
        self._mine_s: dict[str, float] = {}
        self._stage = "ingest"
        self._since = time.perf_counter()

    def count(self, res: AddResult) -> None:
        """An add or flush that returned: its work is in the store, so its cost is kept,
        on disk at once when it wrote or spent anything (a process killed later loses
        none of it)."""
        self.usage.merge(res.usage)
        self.segments += len(res.segments_written)
        self.summaries += len(res.summaries_written)
        if res.segments_written or res.summaries_written or res.usage.roles:
            self.save()

    def spend(self, usage: Usage) -> None:
        """Model usage of a step that is not an add (a sleep)."""
        self.usage.merge(usage)

    def stage(self, name: str) -> None:
        """Close the running stage's clock and start `name`'s."""
        now = time.perf_counter()
        self._mine_s[self._stage] = self._mine_s.get(self._stage, 0.0) + now - self._since
        self._stage, self._since = name, now

    def stop(self) -> None:
        """Close the running stage's clock: the feed is over."""
        self.stage("")

    def seconds(self, stage: str) -> float:
        """Seconds spent in `stage` by every invocation, this one's running stage included."""
        mine = self._mine_s.get(stage, 0.0)
        if stage == self._stage:
            mine += time.perf_counter() - self._since
        return self._earlier_s.get(stage, 0.0) + mine

    def save(self) -> None:
        """Write the cost so far to `path` (atomically: an interruption leaves the old record
        or the new one)."""
        if self.path is None:
            return
        stages = {*self._earlier_s, *self._mine_s, self._stage} - {""}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(
            self.path,
            {
                "parts": self.parts,
                "segments": self.segments,
                "summaries": self.summaries,
                "usage": {k: v.model_dump() for k, v in self.usage.roles.items()},
                "seconds": {s: round(self.seconds(s), 3) for s in sorted(stages)},
            },
        )

    @contextmanager
    def feeding(self) -> Iterator[IngestTally]:
        """The block that feeds the unit: if anything stops it (Ctrl-C, a failure), the cost
        counted so far, and the seconds up to now, are saved for the next invocation."""
        try:
            yield self
        except BaseException:
            self.save()
            raise

    def fields(self) -> dict[str, Any]:
        """The summed fields of the unit's record."""
        total = self.usage.total
        return {
            "segments": self.segments,
            "summaries": self.summaries,
            "calls": total.calls,
            "tokens": total.total_tokens,
            "usage": {k: v.model_dump() for k, v in self.usage.roles.items()},
            "parts": self.parts,
        }

    def finish(self) -> None:
        """The unit's record is written: its partial cost is no longer needed."""
        if self.path is None:
            return
        self.path.unlink(missing_ok=True)
        with suppress(OSError):  # another unit's partial cost is still there
            self.path.parent.rmdir()  # once no unit is left unfinished


__all__ = ["PARTIAL_DIR", "IngestTally", "partial_path"]
