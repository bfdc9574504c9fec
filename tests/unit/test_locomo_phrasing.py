"""LoCoMo's gold wording of relative dates lives in the evaluation adapter, not in the core.

The core's extractive backend words "last Friday" as a calendar day; the LoCoMo runner opts into
"the Friday before 15 July 2023" through the `DatePhrasing` hook, and records that it did."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError
from hymem.evaluation.locomo_format import locomo_date_phrasing, phrased_roles
from hymem.evaluation.manifest import check_resumable
from hymem.llm.extractive.backend import ExtractiveRoles
from hymem.llm.extractive.temporal import rewrite_relative_dates
from hymem.llm.roles import ContextItem, SegmentInput

from tests.bag_embedder import BagEmbedder

MON_8_MAY = datetime(2023, 5, 8, 13, 56)
SAT_15_JUL = datetime(2023, 7, 15, 10, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We went camping last week", "We went camping the week before 8 May 2023"),
        ("I am busy this week", "I am busy the week of 8 May 2023"),
        ("I ran a race last Saturday", "I ran a race the Saturday before 8 May 2023"),
        ("I ran a race on Saturday last", "I ran a race the Saturday before 8 May 2023"),
        ("We meet next Friday", "We meet the Friday after 8 May 2023"),
        ("We hiked last weekend", "We hiked the weekend before 8 May 2023"),
        ("We hike this weekend", "We hike the weekend of 8 May 2023"),
        # the rest keep the core's wording, as LoCoMo's answers do
        ("We meet this Friday", "We meet on 12 May 2023"),
        ("We met Friday before last", "We met on 28 April 2023"),
        ("I went yesterday", "I went on 7 May 2023"),
        ("I moved last month", "I moved in April 2023"),
        ("two weeks ago we met", "two weeks before 8 May 2023 we met"),
    ],
)
def test_locomo_phrasing_words_periods_against_the_day_said(text: str, expected: str) -> None:
    assert rewrite_relative_dates(text, MON_8_MAY, locomo_date_phrasing) == expected


def test_locomo_phrasing_capitalises_at_a_sentence_start() -> None:
    assert rewrite_relative_dates("Last Fri I took my kids", SAT_15_JUL, locomo_date_phrasing) == (
        "The Friday before 15 July 2023 I took my kids"
    )


SEGMENT = SegmentInput(
    segment_id="s",
    lines=["[2023-07-15 10:00] Melanie: I took my kids to the museum last Friday."],
    session_time=SAT_15_JUL,
)
PASSAGES = [
    ContextItem(
        id="seg-1",
        text="[2023-06-09 10:00] Caroline: I gave a talk at a school last week.",
        time_start=datetime(2023, 6, 9, 10, 0),
    )
]
QUESTION = "When did Caroline give a talk at a school?"
MEMORIES = [  # a summary line that kept its relative date, as a model's might
    ContextItem(
        id="sum-1",
        text="Caroline gave a talk at a school last week.",
        time_start=datetime(2023, 6, 9, 10, 0),
    )
]


def test_core_extractive_roles_never_use_locomos_wording() -> None:
    roles = ExtractiveRoles(BagEmbedder())
    [summary] = roles.summarise([SEGMENT]).output.segments
    assert summary.texts == ["Melanie took Melanie's kids to the museum on 14 July 2023."]
    answer = roles.deep_answer(QUESTION, PASSAGES, []).output.answer
    assert answer == "The week of 29 May 2023"
    light = roles.light_answer(QUESTION, MEMORIES, []).output.answer
    assert light == "The week of 29 May 2023"


def test_roles_given_the_locomo_phrasing_use_it_in_summaries_and_answers() -> None:
    roles = ExtractiveRoles(BagEmbedder(), date_phrasing=locomo_date_phrasing)
    [summary] = roles.summarise([SEGMENT]).output.segments
    assert summary.texts == [
        "Melanie took Melanie's kids to the museum the Friday before 15 July 2023."
    ]
    assert roles.deep_answer(QUESTION, PASSAGES, []).output.answer == (
        "The week before 9 June 2023"
    )
    assert roles.light_answer(QUESTION, MEMORIES, []).output.answer == (
        "The week before 9 June 2023"
    )


def test_phrased_roles_only_for_the_extractive_backend_and_locomo() -> None:
    extractive = MemoryConfig.defaults(embedder="hashing")
    roles = phrased_roles(extractive, BagEmbedder(), "locomo")
    assert isinstance(roles, ExtractiveRoles)
    assert roles.deep_answer(QUESTION, PASSAGES, []).output.answer == (
        "The week before 9 June 2023"
    )
    assert phrased_roles(extractive, BagEmbedder(), "general") is None
    model = MemoryConfig.defaults(embedder="hashing", llm="openai:some-model")
    assert phrased_roles(model, BagEmbedder(), "locomo") is None


def test_resume_refused_across_phrasings_and_legacy_runs_count_as_locomo() -> None:
    base = {"config": {"llm": "extractive"}, "extractive": True, "phrasing": "locomo"}
    check_resumable(base, dict(base))
    with pytest.raises(ConfigError, match="phrasing"):
        check_resumable(base, {**base, "phrasing": "general"})
    legacy = {k: v for k, v in base.items() if k != "phrasing"}  # written before the option
    check_resumable(legacy, base)
    with pytest.raises(ConfigError, match="phrasing"):
        check_resumable(legacy, {**base, "phrasing": "general"})
