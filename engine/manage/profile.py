"""The standing profile: a user's current facts, compact enough for an agent's system prompt.

It is a view over what the write path and sleep already keep true, not a summary built per
call: every summary stating a single-valued fact carries its `fact_key` ("subject|relation",
set when it is written, and again when sleep rewrites it), and write-time consolidation leaves
one active summary per fact (`hymem.write.consolidate`). So the profile is one filtered read of
the user's active, keyed summaries (`Records.get_summaries(keyed=True)`), ordered by fact and
cut to a token budget. A newer value replaces the old one in the profile the moment it is
written; should two values of one fact be active (a crash before consolidation, or a change
the model-free reader leaves for sleep), the one said last is shown.
"""

from __future__ import annotations

from datetime import datetime

from hymem.core.errors import UserInputError
from hymem.core.time import UtcDatetime
from hymem.core.types import SummaryRecord
from hymem.indexes.ports import Records
from hymem.llm.tokens import count_tokens
from pydantic import BaseModel, Field, computed_field

DEFAULT_PROFILE_TOKENS = 300
MAX_PROFILE_TOKENS = 8_000


class ProfileFact(BaseModel):
    """One current fact: the memory that states it (its stable id) and since when."""

    memory_id: str
    fact_key: str
    text: str
    valid_from: UtcDatetime | None = None


class Profile(BaseModel):
    """`Memory.profile()`: the facts that fit `max_tokens`, and how many did not."""

    user_id: str
    facts: list[ProfileFact] = Field(default_factory=list)
    tokens: int = 0
    left_out: int = 0

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form
    @property
    def text(self) -> str:
        """The facts as lines, ready for a system prompt."""
        return "\n".join(f"- {f.text}" for f in self.facts)


def check_profile_tokens(max_tokens: object) -> int:
    if (
        isinstance(max_tokens, bool)
        or not isinstance(max_tokens, int)
        or not 1 <= max_tokens <= MAX_PROFILE_TOKENS
    ):
        raise UserInputError(f"max_tokens must be an integer from 1 to {MAX_PROFILE_TOKENS}")
    return max_tokens


def build_profile(store: Records, user_id: str, max_tokens: int) -> Profile:
    """The user's current keyed facts, one per fact key, in key order, within `max_tokens`."""
    latest: dict[str, SummaryRecord] = {}
    for rec in store.get_summaries(user_id, keyed=True):
        key = rec.fact_key or ""
        held = latest.get(key)
        if held is None or _said(rec) > _said(held):
            latest[key] = rec
    profile = Profile(user_id=user_id)
    ordered = [latest[k] for k in sorted(latest)]
    for n, rec in enumerate(ordered):
        cost = count_tokens(rec.text) + 2  # the "- " and the line break
        if profile.tokens + cost > max_tokens:
            profile.left_out = len(ordered) - n
            break
        profile.facts.append(
            ProfileFact(
                memory_id=rec.memory_id,
                fact_key=rec.fact_key or "",
                text=rec.text,
                valid_from=rec.valid_from,
            )
        )
        profile.tokens += cost
    return profile


def _said(rec: SummaryRecord) -> tuple[datetime, str]:
    return (rec.valid_from or rec.created_at, rec.id)


__all__ = [
    "DEFAULT_PROFILE_TOKENS",
    "MAX_PROFILE_TOKENS",
    "Profile",
    "ProfileFact",
    "build_profile",
    "check_profile_tokens",
]
