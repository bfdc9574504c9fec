"""How LoCoMo's gold answers word relative dates ("the Friday before 15 July 2023"), kept out
of the core. (Its session stamps, "1:56 pm on 8 May, 2023", are read with the dataset, by
`hymem.backfill.locomo`.)

The core's extractive backend words "last Friday", said on Saturday 15 July 2023, as the
calendar day "14 July 2023" and "last week" as "the week of 1 May 2023". LoCoMo's annotators
wrote such dates against the session date instead ("the Friday before 15 July 2023", "the week
before 8 May 2023"), and token F1 rewards matching that wording. `locomo_date_phrasing` is that
wording, as a `DatePhrasing` hook; the LoCoMo runner opts into it (`--phrasing locomo`, its
default) and records the choice in the run's manifest and report, and `--phrasing general`
measures the core's own wording. Nothing in the core imports this module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from hymem.llm.extractive.temporal import DateMention, format_day

if TYPE_CHECKING:
    from hymem.core.config import MemoryConfig
    from hymem.embed.embedders import Embedder
    from hymem.llm.roles import Roles

Phrasing = Literal["locomo", "general"]


def locomo_date_phrasing(mention: DateMention) -> str | None:
    """LoCoMo's gold wording of "last/this/next <week|weekend|weekday>": against the day it
    was said ("the Friday before 15 July 2023", "the week of 8 May 2023", "the weekend after
    ..."); None (the core's calendar wording) for every other expression and for "this
    Friday", which LoCoMo also gives as a calendar day."""
    rel = mention.relative
    if rel is None or (mention.granularity == "day" and rel.direction == 0):
        return None
    word = {-1: "before", 0: "of", 1: "after"}[rel.direction]
    return f"the {rel.unit} {word} {format_day(rel.anchor)}"


def phrased_roles(config: MemoryConfig, embedder: Embedder, phrasing: Phrasing) -> Roles | None:
    """Extractive roles that word dates as LoCoMo's gold answers do, for `phrasing="locomo"`
    with the extractive backend; None otherwise (the core builds its own roles: a model
    follows its prompts, and "general" is the core's default)."""
    if phrasing != "locomo" or config.llm.strip() != "extractive":
        return None
    from hymem.llm.extractive.backend import ExtractiveRoles

    return ExtractiveRoles(
        embedder, cache_items=config.extractive_cache_items, date_phrasing=locomo_date_phrasing
    )


__all__ = [
    "Phrasing",
    "locomo_date_phrasing",
    "phrased_roles",
]
