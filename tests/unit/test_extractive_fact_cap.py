"""A long reply keeps its most content-rich sentences, not every sentence, in dialogue order."""

from __future__ import annotations

from datetime import datetime

from hymem.llm.extractive.summarise import MAX_FACTS_PER_LINE, summarise_segment
from hymem.llm.roles import SegmentInput

T0 = datetime(2023, 5, 8, 13, 56)
SENTENCES = [
    "Paris has the Louvre museum.",
    "Rome has the Colosseum, the Pantheon, the Forum and the Trevi Fountain near Piazza Venezia.",
    "Berlin has museums.",
    "Madrid has the Prado, the Reina Sofia and the Thyssen museums beside the Retiro park.",
    "Vienna has palaces.",
    "Lisbon has trams, the Alfama quarter, the Belem tower and fado houses in Bairro Alto.",
    "Prague has the Charles Bridge, the castle, the astronomical clock and the old Jewish quarter.",
]


def test_a_long_line_keeps_its_richest_facts_in_order() -> None:
    line = "[2023-05-08 13:56] assistant: " + " ".join(SENTENCES)
    summary = summarise_segment(SegmentInput(segment_id="s", lines=[line], session_time=T0))
    assert len(summary.texts) == MAX_FACTS_PER_LINE
    kept = [next(i for i, s in enumerate(SENTENCES) if s[:6] in f) for f in summary.texts]
    assert kept == [1, 3, 5, 6]  # the four longest lists of places, still in dialogue order


def test_a_short_line_keeps_every_fact() -> None:
    line = "[2023-05-08 13:56] Ann: " + " ".join(SENTENCES[:2])
    summary = summarise_segment(SegmentInput(segment_id="s", lines=[line], session_time=T0))
    assert len(summary.texts) == 2
