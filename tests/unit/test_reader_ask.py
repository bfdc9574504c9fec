"""Reader.ask over scripted roles and the in-memory store: escalation, deep reads, isolation,
reflection, usage."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.core.errors import LLMAuthError, UserInputError
from hymem.core.types import Level
from hymem.llm.roles import LightAnswerOutput
from hymem.read.candidates import LIGHT_EXTRA

from tests.doubles import Fallback, ScriptedRoles
from tests.doubles_retrieval import FakeSearcher
from tests.fixtures_reader import (
    ReaderFakes,
    make_fakes,
    reader_store,
    segment_record,
    summary_hit,
)


def test_complete_light_verdict_answers_from_summaries() -> None:
    fakes = make_fakes(roles=ScriptedRoles(light=lambda q, c, p: ("Paris", True)))
    ans = fakes.reader().ask(fakes.params("where?", k=5))
    assert (ans.text, ans.path, ans.escalated, ans.complete) == ("Paris", "light", False, True)
    assert [h.id for h in ans.evidence] == [f"sum{i}" for i in range(5)]
    assert fakes.roles.called("select") == [] and fakes.store.segment_requests == []
    # context items carry their dates
    _, context, pool = fakes.roles.called("light_answer")[0]
    assert context[0].time_start == summary_hit(0).time_start and pool == []


def test_incomplete_verdict_escalates_and_reads_exactly_the_linked_segments() -> None:
    picks = {"sum3", "sum17", "sum25"}
    roles = ScriptedRoles(
        light=lambda q, c, p: ("?", False),
        select=lambda q, cands: [c.id for c in cands if c.id in picks],
    )
    fakes = make_fakes(roles=roles)
    ans = fakes.reader().ask(fakes.params("when?", N=30, d=10))
    assert ans.escalated and ans.escalation_reason == "verdict" and ans.path == "deep"
    assert len(roles.called("select")) == 3
    assert fakes.store.segment_requests == [["seg3", "seg17", "seg25"]]
    _, passages, _ = roles.called("deep_answer")[0]
    assert [p.id for p in passages] == ["seg3", "seg17", "seg25"]  # time order
    assert ans.text == "deep:seg3,seg17,seg25"
    segs = [h for h in ans.evidence if h.level == Level.SEGMENT]
    assert [h.id for h in segs] == ["seg3", "seg17", "seg25"]
    assert segs[0].turn_ids == ["t3a", "t3b"] and segs[0].time_start is not None
    assert {h.id for h in ans.evidence if h.level == Level.SUMMARY} == picks


def test_segments_are_deduplicated_and_time_ordered() -> None:
    hits = [summary_hit(0, segment=5), summary_hit(1, segment=2), summary_hit(2, segment=5)]
    fakes = make_fakes(roles=ScriptedRoles(light=lambda q, c, p: ("?", False)))
    fakes.searcher.hits = hits
    # re-committing a segment id replaces it: seg5 now falls on day 1, seg2 on day 9
    fakes.store.commit_segments(
        "alice", [segment_record(5, day=1), segment_record(2, day=9)], [], []
    )
    ans = fakes.reader().ask(fakes.params("q"))
    assert fakes.store.segment_requests == [["seg5", "seg2"]]
    _, passages, _ = fakes.roles.called("deep_answer")[0]
    assert [p.id for p in passages] == ["seg5", "seg2"]  # day 1 before day 9
    assert [h.id for h in ans.evidence if h.level == Level.SEGMENT] == ["seg5", "seg2"]


def test_deep_path_never_reads_another_users_segment() -> None:
    # The model returns an id it was not shown (another user's summary), and alice's sum0
    # links to "seg0", an id only bob holds: neither reaches the deep-answer prompt.
    roles = ScriptedRoles(
        light=lambda q, c, p: ("?", False),
        select=lambda q, cands: ["bob-sum1", cands[0].id],
    )
    fakes = ReaderFakes(
        roles=roles,
        searcher=FakeSearcher([summary_hit(i) for i in range(3)]),
        store=reader_store(
            [segment_record(0, user_id="bob"), segment_record(1), segment_record(2)]
        ),
    )
    ans = fakes.reader().ask(fakes.params("q", d=10))
    assert fakes.store.segment_requests == [["seg0"]]
    _, passages, _ = roles.called("deep_answer")[0]
    assert passages == []
    assert all(h.user_id == "alice" for h in ans.evidence)


def test_depth_light_never_escalates() -> None:
    fakes = make_fakes(roles=ScriptedRoles(light=lambda q, c, p: ("?", False)))
    ans = fakes.reader().ask(fakes.params("q", depth="light", max_iterations=0))
    assert (ans.path, ans.escalated, ans.complete) == ("light", False, False)
    assert fakes.roles.called("select") == []


def test_depth_deep_skips_light_and_says_forced() -> None:
    fakes = make_fakes()
    ans = fakes.reader().ask(fakes.params("q", depth="deep"))
    assert fakes.roles.called("light_answer") == []
    assert ans.escalation_reason == "forced" and ans.path == "deep"


def test_light_fallback_escalates_and_is_visible() -> None:
    fb = Fallback(LightAnswerOutput(answer="", complete=False))
    fakes = make_fakes(roles=ScriptedRoles(light=[fb]))
    ans = fakes.reader().ask(fakes.params("q", max_iterations=0))
    assert ans.escalation_reason == "fallback"
    assert ans.fallbacks == ["light_answer: malformed reply"]


def test_an_escalated_round_embeds_once_and_searches_each_level_once() -> None:
    fakes = make_fakes(roles=ScriptedRoles(light=lambda q, c, p: ("?", False)))
    ans = fakes.reader().ask(fakes.params("q", k=4, N=20, max_iterations=0))
    assert fakes.embedder.calls == [["q"]]
    # one summary search deep enough for the light read (k + LIGHT_EXTRA) and the deep pool
    # (N), cut to each; then the deep pool's segment search
    assert fakes.searcher.queries == [("q", 20), ("q", 20)]
    assert fakes.searcher.levels == [Level.SUMMARY, Level.SEGMENT]
    assert ans.escalated


def test_a_light_only_ask_searches_only_what_the_light_path_reads() -> None:
    fakes = make_fakes(roles=ScriptedRoles(light=lambda q, c, p: ("?", False)))
    fakes.reader().ask(fakes.params("q", depth="light", k=4, N=20, max_iterations=0))
    assert fakes.searcher.queries == [("q", 4 + LIGHT_EXTRA)]


def test_reflection_rewrites_the_next_rounds_search_and_stops_at_cap() -> None:
    questions = iter(["sub one", "sub two", "sub three"])
    roles = ScriptedRoles(reflect=lambda q, a: (False, next(questions)))
    fakes = make_fakes(roles=roles)
    ans = fakes.reader().ask(fakes.params("q0", max_iterations=3))
    searched = list(dict.fromkeys(q for q, _ in fakes.searcher.queries))
    assert searched == ["q0", "sub one", "sub two"]
    assert ans.iterations == 3 and not ans.complete
    assert len(roles.called("reflect")) == 3
    # every role keeps answering the ORIGINAL question; the pool carries earlier answers
    assert [args[0] for args in roles.called("light_answer")] == ["q0"] * 3
    assert roles.called("light_answer")[2][2] == ["light", "light"]


def test_max_iterations_zero_makes_no_reflect_call() -> None:
    fakes = make_fakes()
    ans = fakes.reader().ask(fakes.params("q", max_iterations=0))
    assert fakes.roles.called("reflect") == [] and ans.iterations == 1


def test_usage_latency_and_versions_are_summed_per_role() -> None:
    fakes = make_fakes(roles=ScriptedRoles(light=lambda q, c, p: ("?", False)))
    ans = fakes.reader().ask(fakes.params("q", N=30, d=10, max_iterations=1))
    calls = {role: u.calls for role, u in ans.usage.roles.items()}
    assert calls == {"light_answer": 1, "select": 3, "deep_answer": 1, "reflect": 1}
    assert ans.usage.total.total_tokens == 6 * 12
    assert ans.prompt_versions["select"] == "select@1"
    assert {
        "retrieve_light",
        "light_answer",
        "retrieve_deep",
        "select",
        "deep_answer",
        "reflect",
        "trace",
        "total",
    } <= set(ans.latency_ms)
    assert ans.backend == "scripted"


def test_budget_stops_escalation_and_says_so() -> None:
    partial = ScriptedRoles(light=lambda q, c, p: ("partial", False))
    fakes = make_fakes(roles=partial, max_calls_per_ask=1)
    reader = fakes.reader()
    ans = reader.ask(fakes.params("q"))
    reader.flush_traces()
    assert ans.budget_exhausted and not ans.escalated and ans.text == "partial"
    assert fakes.roles.called("select") == [] and fakes.roles.called("reflect") == []
    assert fakes.store.read_traces()[0]["budget_stops"]


def test_budget_trims_selection_batches() -> None:
    fakes = make_fakes(roles=ScriptedRoles(light=lambda q, c, p: ("?", False)), max_calls_per_ask=4)
    ans = fakes.reader().ask(fakes.params("q", N=30, d=10))
    assert len(fakes.roles.called("select")) == 2
    assert ans.usage.total.calls == 4 and ans.budget_exhausted


def test_backend_failure_propagates_after_writing_an_error_trace() -> None:
    # a model that is down falls back (tests/integration/test_ask_fallbacks.py); bad
    # credentials, which no fallback fixes, still fail the ask
    def broken(q: str, c: object, p: object) -> tuple[str, bool]:
        raise LLMAuthError("bad key", role="light_answer")

    fakes = make_fakes(roles=ScriptedRoles(light=broken))
    reader = fakes.reader()
    with pytest.raises(LLMAuthError):
        reader.ask(fakes.params("q"))
    reader.close()  # close() writes what is still queued
    (trace,) = fakes.store.read_traces()
    assert trace["error"].startswith("LLMAuthError") and trace["answer"] == ""


@pytest.mark.parametrize(
    "kwargs",
    [
        {"question": "  "},
        {"user_id": ""},
        {"depth": "medium"},
        {"k": 0},
        {"N": -1},
        {"d": 0},
        {"max_iterations": -1},
    ],
)
def test_bad_input_is_a_user_input_error(kwargs: dict[str, object]) -> None:
    """Checked once, where the ask's params are built (`ask_params`, as `Memory.ask` does):
    the reader is never reached."""
    args: dict[str, object] = {"question": "q", **kwargs}
    fakes = make_fakes()
    with pytest.raises(UserInputError):
        fakes.params(args.pop("question"), **args)  # type: ignore[arg-type]
    assert fakes.roles.calls == []


def test_as_of_bounds_retrieval_reaches_the_roles_and_is_recorded() -> None:
    as_of = datetime(2023, 6, 1, 12, 0)
    roles = ScriptedRoles(light=lambda q, c, p: ("?", False))
    fakes = make_fakes(roles=roles)
    reader = fakes.reader()
    ans = reader.ask(fakes.params("what happened last week?", as_of=as_of))
    assert fakes.searcher.time_ranges and all(
        tr == (None, as_of) for tr in fakes.searcher.time_ranges
    )
    assert roles.asked_on and all(now == as_of for now in roles.asked_on)
    assert ans.as_of == as_of
    reader.close()
    (trace,) = fakes.store.read_traces(user_id="alice")
    # stored as ISO 8601 with its UTC offset, naive UTC again when read back
    assert trace["as_of"] == as_of.isoformat() + "Z"
    assert datetime.fromisoformat(trace["as_of"]).replace(tzinfo=None) == as_of


def test_without_as_of_nothing_is_bounded() -> None:
    fakes = make_fakes(roles=ScriptedRoles(light=lambda q, c, p: ("Paris", True)))
    ans = fakes.reader().ask(fakes.params("where?"))
    assert set(fakes.searcher.time_ranges) == {None} and ans.as_of is None
