"""One update decision about a summary, made from a model's reply: `update` (a merged text
replaces it as a new version), `delete` (newer information contradicts it) or `ignore`.

`normalise_decision` checks the reply against the target and the newer summaries it was shown,
and the merge guard turns a merge that drops a content word only the older summary held
(LightMem's "Tokyo trip + Kyoto inquiry" case) into an ignore, counted as `rejected`.
`version_id` names the version a merge makes, deterministically.

Pure (no disk, no models), and shared by consolidation at write time (`hymem.write.consolidate`)
and at sleep time (`hymem.sleep.plan`, `hymem.sleep.decide`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from hymem.core.types import SummaryRecord
from hymem.indexes.lexical.analysis import content_terms

Action = Literal["update", "delete", "ignore"]
DecisionKind = Literal["update", "delete", "ignore", "rejected"]


@dataclass(frozen=True)
class Decision:
    """One finished decision about `target_id`, after normalisation and the merge guard."""

    target_id: str
    action: Action
    text: str | None = None
    evidence_id: str | None = None
    reason: str | None = None
    rejected: str | None = None  # why an update was turned into an ignore, if it was

    @property
    def kind(self) -> DecisionKind:
        return "rejected" if self.rejected else self.action


def merge_guard(target_text: str, newer_texts: Iterable[str], merged: str) -> list[str]:
    """Content-word stems that only the older summary held and the merge dropped (empty: ok).

    Words are stemmed as the lexical index stems them (`hymem.indexes.lexical.analysis`),
    function words aside, so a merge the guard accepts keeps every content word a keyword search
    could have found the target by, while resolving "she" to "Melanie" is not a loss."""
    newer: set[str] = set()
    for text in newer_texts:
        newer.update(content_terms(text))
    kept = set(content_terms(merged))
    return [s for s in content_terms(target_text) if s not in newer and s not in kept]


def normalise_decision(
    target: SummaryRecord,
    queue: Sequence[SummaryRecord],
    action: str,
    text: str | None,
    evidence_id: str | None,
    reason: str | None,
) -> Decision:
    """Validate a model's reply against the target and its queue.

    Unknown actions become ignore; an evidence id not in the queue falls back to the most
    similar queue item (the model sees ids, but may misquote them); an update whose text is empty
    or unchanged is an ignore; an update that drops a fact only the target held is rejected.
    """
    act = (action or "").strip().lower()
    queue_ids = [q.id for q in queue]
    evidence = evidence_id if evidence_id in queue_ids else (queue_ids[0] if queue_ids else None)
    if act == "delete":
        return Decision(
            target.id,
            "delete",
            evidence_id=evidence,
            reason=reason or "contradicted by newer information",
        )
    if act != "update":
        return Decision(target.id, "ignore", reason=reason)
    merged = (text or "").strip()
    if not merged or merged == target.text.strip():
        return Decision(target.id, "ignore", reason=reason or "merge left the text unchanged")
    dropped = merge_guard(target.text, (q.text for q in queue), merged)
    if dropped:
        return Decision(
            target.id,
            "ignore",
            text=merged,
            evidence_id=evidence,
            reason=reason,
            rejected="merge dropped facts only the older summary held: " + ", ".join(dropped),
        )
    return Decision(target.id, "update", text=merged, evidence_id=evidence, reason=reason)


def version_id(target_id: str, version: int, text: str) -> str:
    """Deterministic id of a consolidated version: a resumed sleep re-creates the same ids, so
    an interrupted run and an uninterrupted one end in the same state."""
    digest = hashlib.sha256(f"consolidated\x1f{target_id}\x1f{version}\x1f{text}".encode())
    return digest.hexdigest()[:32]


__all__ = [
    "Action",
    "Decision",
    "DecisionKind",
    "merge_guard",
    "normalise_decision",
    "version_id",
]
