"""Reader.context (retrieval for callers with their own model) and selection concurrency."""

from __future__ import annotations

import itertools

import pytest
from hymem.core.errors import LLMUnavailable, UserInputError
from hymem.core.types import Level
from hymem.llm.tokens import count_tokens

from tests.doubles import ScriptedRoles
from tests.fixtures_reader import make_fakes


def test_light_context_is_the_top_k_summaries_without_model_calls() -> None:
    fakes = make_fakes(k=4, light_tokens=0)
    hits = fakes.reader().context(fakes.params("q", depth="light"))
    assert [h.id for h in hits] == ["sum0", "sum1", "sum2", "sum3"]
    assert fakes.roles.calls == []


def test_deep_context_is_the_model_selected_segments() -> None:
    roles = ScriptedRoles(select=lambda q, cands: [c.id for c in cands if c.id in {"sum4", "sum8"}])
    fakes = make_fakes(roles=roles, n_deep=10, select_batch=5)
    hits = fakes.reader().context(fakes.params("q", depth="deep"))
    assert [(h.level, h.id) for h in hits] == [(Level.SEGMENT, "seg4"), (Level.SEGMENT, "seg8")]
    assert len(roles.called("select")) == 2 and roles.called("light_answer") == []


def test_auto_context_adds_segments_only_when_light_verdict_is_incomplete() -> None:
    complete = make_fakes(k=3, n_deep=6, light_tokens=0)
    hits = complete.reader().context(complete.params("q", depth="auto"))
    assert [h.level for h in hits] == [Level.SUMMARY] * 3

    incomplete = make_fakes(
        roles=ScriptedRoles(light=lambda q, c, p: ("?", False)), k=3, n_deep=6, light_tokens=0
    )
    hits = incomplete.reader().context(incomplete.params("q", depth="auto"))
    levels = [h.level for h in hits]
    assert levels == [Level.SUMMARY] * 3 + [Level.SEGMENT] * 6


def test_context_rejects_bad_depth() -> None:
    with pytest.raises(UserInputError):
        make_fakes().params("q", depth="sideways")


def test_selection_batches_run_concurrently() -> None:
    delay = 0.15
    roles = ScriptedRoles(light=lambda q, c, p: ("?", False), latency_s={"select": delay})
    fakes = make_fakes(roles=roles, llm_concurrency=8)
    ans = fakes.reader().ask(fakes.params("q", N=30, d=10, max_iterations=0))
    spans = [(c.start, c.end) for c in roles.calls if c.role == "select"]
    assert len(spans) == 3
    # all three were in flight at the same moment, and the stage took well under 2 delays
    assert max(s for s, _ in spans) < min(e for _, e in spans)
    assert ans.latency_ms["select"] < 2 * delay * 1000


def test_selection_concurrency_is_bounded_by_config() -> None:
    delay = 0.05
    roles = ScriptedRoles(light=lambda q, c, p: ("?", False), latency_s={"select": delay})
    fakes = make_fakes(roles=roles, llm_concurrency=1)
    ans = fakes.reader().ask(fakes.params("q", N=30, d=10, max_iterations=0))
    spans = sorted((c.start, c.end) for c in roles.calls if c.role == "select")
    assert all(prev_end <= start for (_, prev_end), (start, _) in itertools.pairwise(spans))
    assert ans.latency_ms["select"] >= 3 * delay * 1000 * 0.9


def test_light_context_by_default_fills_the_token_budget_with_distinct_sources() -> None:
    """Issue #29: the light path reads by budget, not by count: more than k summaries, every
    one adding a source turn, their text within `light_tokens`."""
    fakes = make_fakes(60, k=4, light_tokens=40)
    hits = fakes.reader().context(fakes.params("q", depth="light"))
    assert len(hits) > 4 and len({h.id for h in hits}) == len(hits)
    assert sum(count_tokens(h.text) for h in hits) <= 40
    assert {Level.SUMMARY, Level.SEGMENT} <= set(fakes.searcher.levels)
    explicit = fakes.reader().context(fakes.params("q", depth="light", k=4))
    assert [h.id for h in explicit] == ["sum0", "sum1", "sum2", "sum3"]  # a k asked is a count


def test_auto_context_survives_a_failed_light_verdict_by_reading_deeper() -> None:
    down = LLMUnavailable("model server down", role="light_answer")
    fakes = make_fakes(roles=ScriptedRoles(light=[down]), k=3, n_deep=6, light_tokens=0)
    hits = fakes.reader().context(fakes.params("q", depth="auto"))
    # the verdict is unknown, so the context is the light summaries and deep segments (chosen
    # by similarity: the model is down)
    levels = [h.level for h in hits]
    assert levels[:3] == [Level.SUMMARY] * 3
    assert levels[3:] and set(levels[3:]) == {Level.SEGMENT}


def test_auto_context_raises_a_failed_light_verdict_when_fallbacks_are_off() -> None:
    down = LLMUnavailable("model server down", role="light_answer")
    fakes = make_fakes(
        roles=ScriptedRoles(light=[down]), k=3, n_deep=6, light_tokens=0, ask_fallback=False
    )
    with pytest.raises(LLMUnavailable):
        fakes.reader().context(fakes.params("q", depth="auto"))
